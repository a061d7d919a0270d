"""The child interpreter's entry point: ``python -X faulthandler launch.py SPEC RESULT``.

A script is compiled from source on every start, so this one is kept tiny: it
makes ``import mgradcheck`` resolve to the copy it belongs to (never the
parent's site-packages), then hands over to :mod:`mgradcheck.child.bootstrap`,
which is imported, and cached as bytecode, like any module.
"""

import importlib.machinery
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == here:
    del sys.path[0]  # never shadow the environment's modules with ours
if "mgradcheck" not in sys.modules:
    package = os.path.dirname(here)
    init = os.path.join(package, "__init__.py")
    module = type(sys)("mgradcheck")
    module.__file__ = init
    module.__path__ = [package]
    sys.modules["mgradcheck"] = module
    importlib.machinery.SourceFileLoader("mgradcheck", init).exec_module(module)

from mgradcheck.child.bootstrap import main  # noqa: E402

sys.exit(main(sys.argv))
