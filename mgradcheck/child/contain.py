"""What ties a child to the run that started it, done by ``launch.py`` before anything else.

The parent names what to do in the environment: its pid (``MGRADCHECK_PARENT``), the
cgroup to join (``MGRADCHECK_CGROUP``), a pipe whose end means the parent is gone where
there is no ``PR_SET_PDEATHSIG`` (``MGRADCHECK_WATCHDOG_FD``).
"""

import os
import signal
import sys

TYPE_CHECKING = False  # typing itself would cost every child's start
if TYPE_CHECKING:
    import _thread

LINUX = sys.platform.startswith("linux")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# mgradcheck.errors.INTERRUPTING, which the child cannot import
INTERRUPTING = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU")


def prctl(option: int, value: int) -> bool:
    """Linux's ``prctl(option, value, 0, 0, 0)``; whether it succeeded."""
    try:
        import ctypes

        return int(ctypes.CDLL(None).prctl(option, value, 0, 0, 0)) == 0
    except (ImportError, OSError, AttributeError, TypeError):
        return False


_moving: "_thread.LockType | None" = None  # held while this process moves into its cgroup
_watching = 0  # the threads that watch for the parent's death (one, where PDEATHSIG is not)


def _join(cgroup: str) -> None:
    """Move this process into its cgroup, on a thread of its own: the move may wait for the
    kernel (the cgroup write lock waits out an RCU grace period: up to 19 ms of wall clock,
    no CPU, in bench/README.md), and meanwhile the child imports MLX. :func:`contained`
    waits for it."""
    global _moving
    import _thread

    _moving = _thread.allocate_lock()
    _moving.acquire()

    def move(done: "_thread.LockType") -> None:
        try:
            fd = os.open(cgroup, os.O_WRONLY | os.O_CLOEXEC)  # no codec: nothing to import
            try:
                os.write(fd, str(os.getpid()).encode())  # the whole process moves, every thread
            finally:
                os.close(fd)
        except OSError:
            pass  # the parent still kills the process group and what it adopts
        finally:
            done.release()

    _thread.start_new_thread(move, (_moving,))


def contained() -> None:
    """Return once this process is in the cgroup :func:`contain` put it in, if any, and the
    thread that moved it is gone: before anything of the entry's runs, and before this
    process becomes another program."""
    global _moving
    if _moving is None:
        return
    import _thread

    _moving.acquire()
    _moving = None
    while _thread._count() > _watching:  # the mover has let go of the lock: it ends now
        os.sched_yield()


def contain() -> None:
    """Die with the run; start moving into the run's cgroup for this child, if it made one
    (:func:`contained` waits for the move)."""
    global _watching
    env = os.environ
    if hasattr(signal, "pthread_sigmask"):  # the runner may block these while it watches them
        names = (*INTERRUPTING, "SIGRTMIN")  # and the signal that wakes its watcher
        signals = [getattr(signal, name) for name in names if hasattr(signal, name)]
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
    cgroup = env.pop("MGRADCHECK_CGROUP", None)
    if cgroup:
        _join(cgroup)
    parent = int(env.get("MGRADCHECK_PARENT") or 0)
    if LINUX:
        prctl(PR_SET_PDEATHSIG, 9)  # SIGKILL; if it fails, the parent still kills the group
    watchdog = env.pop("MGRADCHECK_WATCHDOG_FD", None)
    if watchdog:
        import _thread

        def watch(fd: int) -> None:
            os.read(fd, 1)  # returns only when the parent's end closes: it has died
            os.killpg(0, 9)

        _thread.start_new_thread(watch, (int(watchdog),))
        _watching += 1
    if parent:
        try:
            os.kill(parent, 0)  # it may have died before the death signal was armed
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass
