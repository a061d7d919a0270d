"""The child interpreter's entry point: ``python -X faulthandler launch.py SPEC RESULT``.

A script is compiled from source on every start, so this one is kept tiny. It
makes ``import mgradcheck`` resolve to the copy it belongs to (never the parent's
site-packages), ties the child to the run that started it
(:func:`mgradcheck.child.contain.contain`), then hands over to
:mod:`mgradcheck.child.bootstrap`; both are imported, and cached as bytecode, like
any module. Nothing of the entry's runs before the child is tied to its run: its
move into its cgroup goes on while MLX is imported, and the entry waits for it
(:func:`mgradcheck.child.contain.contained`).

``launch.py --exec PROGRAM ARG...`` ties it, then becomes PROGRAM: how the run
starts an installer that must not outlive it.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == here:
    del sys.path[0]  # never shadow the environment's modules with ours
if "mgradcheck" not in sys.modules:
    # Found where this file lives, for this one import: the directory holding our package
    # (site-packages, say) is never searched for anything else. The package named is the one
    # this file is in, which loads the root with it; the child imports nothing above itself.
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    try:
        import mgradcheck.child  # noqa: F401
    finally:
        del sys.path[0]

from mgradcheck.child.contain import contain, contained  # noqa: E402

contain()
if sys.argv[1:2] == ["--exec"]:
    contained()
    os.execv(sys.argv[2], sys.argv[2:])

from mgradcheck.child.bootstrap import main  # noqa: E402

sys.exit(main(sys.argv))
