"""Nothing a child starts outlives its entry, and no child outlives the run.

A child runs in its own session and process group, so killing the group takes
what stayed in it. What leaves it (``setsid``, a double-forked daemon) is found
three ways, the strongest available first:

* a cgroup (v2) per child, where this process may make one under its own
  (``MGRADCHECK_CGROUPS=0`` says not to): the child moves itself in before
  its entry runs (the move, which may wait on the kernel, goes on while it
  imports MLX), and ``cgroup.kill`` ends every process in it at once, however
  far it went;
* on Linux, this process is a child subreaper (``PR_SET_CHILD_SUBREAPER``): an
  orphan of a child is handed to us, not to init, and is killed and reaped when
  it carries its child's token (``MGRADCHECK_CHILD``, inherited through the
  environment) or still belongs to its child's session;
* elsewhere (macOS) only the process group.

Only what is provably ours is ever killed or reaped: a process of this token or
this child's session, or of this child's cgroup. Other subprocesses of the same
process (installers, a test runner's own) are never touched, and are waited
for by whoever started them. Each child also dies with us: on Linux it sets
``PR_SET_PDEATHSIG`` itself (``child/contain.py``); elsewhere it watches a pipe
whose end closes when we die.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import select
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from mgradcheck.child.contain import LINUX, PR_SET_CHILD_SUBREAPER, prctl

TOKEN = "MGRADCHECK_CHILD"
REAP_SECONDS = 2.0  # at most, for what we killed to die and be reaped
_counter = itertools.count(1)
_lock = threading.Lock()
_ready = False
_watchdog: tuple[int, int] | None = None  # a pipe whose write end dies with us
_cgroups: Path | None = None  # this process's directory of per-child cgroups


def _own_cgroup() -> Path | None:
    """This process's cgroup v2 directory, when we may make cgroups under it."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    path = next((line[3:] for line in lines if line.startswith("0::")), None)
    mount = next((m.split()[4] for m in mounts if " - cgroup2 " in m and m.split()[3] == "/"), None)
    if path is None or mount is None:
        return None
    own = Path(mount + path.rstrip("/")) if path != "/" else Path(mount)
    ok = os.access(own, os.W_OK) and os.access(own / "cgroup.procs", os.W_OK)
    return own if ok else None


def _setup() -> None:
    """Once per process, on first use: subreaper, cgroups, watchdog; and clean a killed run's cgroups."""
    global _ready, _watchdog, _cgroups
    with _lock:
        if _ready:
            return
        _ready = True
        if not LINUX:
            _watchdog = os.pipe()  # both ends close-on-exec; the child gets the read end alone
            return
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        own = None if os.environ.get("MGRADCHECK_CGROUPS") == "0" else _own_cgroup()
        if own is None:
            return
        _remove_stale_cgroups(own)
        base = own / f"mgradcheck-{os.getpid()}"
        try:
            base.mkdir(exist_ok=True)
        except OSError:
            return
        if (base / "cgroup.procs").exists():
            _cgroups = base
            atexit.register(_remove_base, base)


def _remove_base(base: Path) -> None:
    with contextlib.suppress(OSError):
        base.rmdir()


def _remove_stale_cgroups(own: Path) -> None:
    """Kill what a killed mgradcheck left in its cgroups (by their names, ours), then remove them."""
    for base in own.glob("mgradcheck-*"):
        pid = base.name.removeprefix("mgradcheck-")
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its run is alive (or the pid is someone else's now: left alone)
        except ProcessLookupError:
            pass
        except OSError:
            continue
        for child in base.iterdir():
            if child.is_dir():
                _kill_cgroup(child, reap=False)
        with contextlib.suppress(OSError):
            base.rmdir()


def _kill_cgroup(group: Path, reap: bool) -> None:
    members = _members(group)
    doomed = _pidfds(members) if reap else {}  # opened before the kill: never a reused pid
    if not members:
        pass
    elif (group / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (group / "cgroup.kill").write_text("1")
    else:
        for pid in members:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + REAP_SECONDS
    _reap(doomed, deadline)
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            group.rmdir()  # refused while a process is still in it
            return
        for pid in _members(group):  # forked before the kill landed
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


@dataclass
class Box:
    """What contains one child: the environment and file descriptors it starts with, and how to clean up."""

    token: str
    env: dict[str, str] = field(default_factory=dict)
    pass_fds: tuple[int, ...] = ()
    cgroup: Path | None = None

    def discard(self) -> None:
        """The child never started."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()

    def clean(self, pid: int) -> None:
        """After the child ``pid`` has exited and been waited for: end everything it left."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        if self.cgroup is not None:
            _kill_cgroup(self.cgroup, reap=True)
        if LINUX:
            _kill_adopted(self.token, pid)


def box() -> Box:
    """A new child's containment: its token, its cgroup (made here) and its watchdog."""
    _setup()
    token = f"{os.getpid()}.{next(_counter)}"
    made = Box(token, {TOKEN: token, "MGRADCHECK_PARENT": str(os.getpid())})
    if _cgroups is not None:
        group = _cgroups / token.replace(".", "-")
        try:
            group.mkdir()
        except OSError:
            pass
        else:
            made.cgroup = group
            made.env["MGRADCHECK_CGROUP"] = str(group / "cgroup.procs")
    if _watchdog is not None:
        made.env["MGRADCHECK_WATCHDOG_FD"] = str(_watchdog[0])
        made.pass_fds = (_watchdog[0],)
    return made


def belongs(pid: int, child: int, token: str) -> bool:
    """Whether process ``pid`` is the child ``child`` or was started by it."""
    if pid == child:
        return True
    try:
        if child in (os.getpgid(pid), os.getsid(pid)):
            return True
    except OSError:
        return False
    return bool(token) and LINUX and _carries(pid, token)


# --- what the subreaper adopts -------------------------------------------------------------


def _children(pid: int | str) -> list[int]:
    """The children of process ``pid`` ("self" for this one), from every thread's list."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _stat(pid: int) -> tuple[str, int, int] | None:
    """State, process group and session of ``pid``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2]), int(fields[3])


def _carries(pid: int, token: str) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{TOKEN}={token}\0".encode() in b"\0" + environ + b"\0"


def _kill_adopted(token: str, child: int) -> None:
    """Kill and reap the orphans of ``child`` handed to this (subreaper) process, and their descendants."""
    doomed: dict[int, int | None] = {}  # pid -> its pidfd, opened before it is killed
    for _ in range(10):  # until a pass finds nothing new (they may fork while we look)
        found = [pid for pid in _children("self") if pid not in doomed and _ours(pid, token, child)]
        if not found:
            break
        todo = list(found)
        while todo:
            pid = todo.pop()
            if pid in doomed:
                continue
            doomed[pid] = _pidfd(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)  # no more forks while we walk its tree
            todo += _children(pid)
    for pid in doomed:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _reap(doomed, time.monotonic() + REAP_SECONDS)


def _ours(pid: int, token: str, child: int) -> bool:
    stat = _stat(pid)
    if stat is None:
        return False
    state, group, session = stat
    if child in (group, session):
        return True  # still in the child's group or session (a zombie keeps both)
    return state != "Z" and _carries(pid, token)


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def _pidfds(pids: list[int]) -> dict[int, int | None]:
    return {pid: _pidfd(pid) for pid in pids}


def _exited(pidfd: int) -> bool:
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))


def _reap(doomed: dict[int, int | None], deadline: float) -> None:
    """Wait for each killed process that is (or becomes, as its parent dies) our child.

    Through its pidfd, so a pid reused meanwhile by another of our subprocesses is never
    waited for in its place. A process that is not our child is its parent's to reap.
    """
    waiting = {pid: fd for pid, fd in doomed.items() if fd is not None}
    try:
        while waiting and time.monotonic() < deadline:
            for pid, fd in list(waiting.items()):
                try:
                    if os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG) is None:
                        continue  # ours, not dead yet
                except ChildProcessError:
                    if not _exited(fd):
                        continue  # not (yet) ours: its parent may be dying too
                except OSError:
                    pass
                del waiting[pid]
                os.close(fd)
            if waiting:
                time.sleep(0.005)
    finally:
        for fd in waiting.values():
            os.close(fd)
