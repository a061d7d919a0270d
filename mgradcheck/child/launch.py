"""The child interpreter's entry point: ``python -X faulthandler launch.py SPEC RESULT``.

A script is compiled from source on every start, so this one is kept tiny. It
first ties the child to the run that started it (see :func:`_contain`), then
makes ``import mgradcheck`` resolve to the copy it belongs to (never the
parent's site-packages), then hands over to :mod:`mgradcheck.child.bootstrap`,
which is imported, and cached as bytecode, like any module.

``launch.py --exec PROGRAM ARG...`` does only the first part, then becomes
PROGRAM: how the run starts an installer that must not outlive it.
"""

import os
import signal
import sys


def _contain() -> None:
    """Die with the run; move into the run's cgroup for this child, if it made one.

    The parent names what to do in the environment: its pid (MGRADCHECK_PARENT),
    the cgroup to join (MGRADCHECK_CGROUP), a pipe whose end means the parent is
    gone where there is no PR_SET_PDEATHSIG (MGRADCHECK_WATCHDOG_FD).
    """
    env = os.environ
    if hasattr(signal, "pthread_sigmask"):  # the runner may block these while it watches them
        # mgradcheck.errors.INTERRUPTING, which this file cannot import
        names = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU")
        signal.pthread_sigmask(
            signal.SIG_UNBLOCK, [getattr(signal, n) for n in names if hasattr(signal, n)]
        )
    cgroup = env.pop("MGRADCHECK_CGROUP", None)
    if cgroup:
        try:
            with open(cgroup, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass  # the parent still kills the process group and what it adopts
    parent = int(env.get("MGRADCHECK_PARENT") or 0)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass
    watchdog = env.pop("MGRADCHECK_WATCHDOG_FD", None)
    if watchdog:
        import _thread

        def watch(fd: int) -> None:
            os.read(fd, 1)  # returns only when the parent's end closes: it has died
            os.killpg(0, 9)

        _thread.start_new_thread(watch, (int(watchdog),))
    if parent:
        try:
            os.kill(parent, 0)  # it may have died before the death signal was armed
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass


_contain()
if sys.argv[1:2] == ["--exec"]:
    os.execv(sys.argv[2], sys.argv[2:])

here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == here:
    del sys.path[0]  # never shadow the environment's modules with ours
if "mgradcheck" not in sys.modules:
    import importlib.machinery

    package = os.path.dirname(here)
    init = os.path.join(package, "__init__.py")
    module = type(sys)("mgradcheck")
    module.__file__ = init
    module.__path__ = [package]
    sys.modules["mgradcheck"] = module
    importlib.machinery.SourceFileLoader("mgradcheck", init).exec_module(module)

from mgradcheck.child.bootstrap import main  # noqa: E402

sys.exit(main(sys.argv))
