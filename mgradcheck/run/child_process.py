"""Spawn one child interpreter, watch it, and describe what it did.

The child runs in its own session and process group, stdin closed, under
``-X faulthandler``. Its output is drained by reader threads that keep only a
capped head and tail, so a child printing gigabytes costs the parent a few
hundred kilobytes. When the child ends (or times out) the whole group is
killed, grandchildren included, before the readers are joined.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgradcheck.outcomes import Outcome
from mgradcheck.run.observation import Capture, Observation, strict

LAUNCHER = Path(__file__).resolve().parent.parent / "child" / "launch.py"
HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
GRACE_SECONDS = 2.0
RESULT_BYTES = 1 << 20  # a result holds capped texts (see bootstrap): far below this


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping the first and last bytes only."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self.total += len(chunk)
                room = HEAD_BYTES - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_size += len(chunk)
                    while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
                        self.tail_size -= len(self.tail.popleft())
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def capture(self) -> Capture:
        tail = b"".join(self.tail)[-TAIL_BYTES:]
        kept = len(self.head) + len(tail)
        return Capture(bytes(self.head), tail, self.total, self.total - kept)


@dataclass(frozen=True)
class ChildCommand:
    """How to start a child: which interpreter, with which extra environment."""

    python: str
    extra_env: Mapping[str, str] | None = None
    memory_limit: int | None = None

    def argv(self, spec: Path, result: Path) -> list[str]:
        return [self.python, "-X", "faulthandler", str(LAUNCHER), str(spec), str(result)]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PYTHONSTARTUP", None)
        if self.extra_env:
            env.update(self.extra_env)
        return env


class Stopped(Exception):
    """Raised into a waiting child when the whole run is being stopped."""


@dataclass(eq=False)
class LiveChild:
    """A running child that :func:`stop` may kill from another thread."""

    process: subprocess.Popen[bytes]
    stopped: bool = False

    def kill_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def stop(self) -> None:
        self.stopped = True
        self.kill_group(signal.SIGKILL)


def run_child(
    command: ChildCommand,
    spec: dict[str, Any],
    workdir: Path,
    timeout: float,
    on_start: Callable[[LiveChild], None] | None = None,
) -> tuple[Observation, dict[str, Any] | None]:
    """Run one child to completion; return what it did and the result it wrote, if any."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.txt"
    result_path = workdir / "result.json"
    # A Python literal, not JSON: the child reads it without importing json (see bootstrap).
    spec_path.write_text(repr(spec), encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):
        result_path.unlink()
    started = time.monotonic()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        process = subprocess.Popen(
            command.argv(spec_path, result_path),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            cwd=workdir,
            env=command.env(),
            start_new_session=True,
        )
    except OSError as exc:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        return harness_error(f"cannot start {command.python}: {exc.strerror or exc}"), None
    os.close(out_w)
    os.close(err_w)
    drains = [_Drain(out_r), _Drain(err_r)]
    for drain in drains:
        drain.start()
    live = LiveChild(process)
    if on_start is not None:
        on_start(live)
    # Popen.wait(timeout) polls with sleeps of up to 50 ms, a cost paid by every
    # entry; a blocking wait in a thread wakes the moment the child exits.
    exited = threading.Event()

    def wait_for_exit() -> None:
        process.wait()
        exited.set()

    waiter = threading.Thread(target=wait_for_exit, daemon=True)
    waiter.start()
    timed_out = False
    try:
        if not exited.wait(timeout):
            timed_out = True
            live.kill_group(signal.SIGTERM)
            if not exited.wait(GRACE_SECONDS):
                live.kill_group(signal.SIGKILL)
                exited.wait()
    finally:
        # The child is gone; take anything it left behind in its group with it.
        live.kill_group(signal.SIGKILL)
        waiter.join()
        for drain in drains:
            drain.join()
    duration = time.monotonic() - started
    stdout, stderr = (d.capture().text() for d in drains)
    result, unusable = _read_result(result_path)
    if live.stopped:
        return Observation(Outcome.NOT_RUN, duration, message="not run: the run was stopped"), None
    observation = _observe(
        process.returncode, timed_out, timeout, duration, stdout, stderr, result, unusable
    )
    return observation, result


def _read_result(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The result the child wrote, or None and why not ("" when there is simply none).

    The file is the child's to write, so it is read as untrusted: never through a
    link, only if it is a regular file, and only up to :data:`RESULT_BYTES`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, ""  # the child died before writing it
    except OSError as exc:
        return None, f"its result file could not be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "its result file is not a regular file"
        if info.st_size > RESULT_BYTES:
            return None, f"its result file holds {info.st_size} bytes, over the {RESULT_BYTES} read"
        raw = b""
        while len(raw) <= RESULT_BYTES and (chunk := os.read(fd, RESULT_BYTES + 1 - len(raw))):
            raw += chunk
    finally:
        os.close(fd)
    if len(raw) > RESULT_BYTES:
        return None, f"its result file grew over the {RESULT_BYTES} bytes read"
    try:
        data = json.loads(raw.decode("utf-8", "replace"), parse_constant=_no_constant)
    except ValueError:
        return None, ""  # half-written: the child died while writing it
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        return None, ""
    return strict(data), ""


def _no_constant(name: str) -> None:
    return None  # NaN and Infinity are not JSON; read as null


def harness_error(message: str, traceback: str = "") -> Observation:
    """Our own failure, never to be mistaken for an MLX bug."""
    return Observation(
        Outcome.ERROR,
        0.0,
        exc_type="HarnessError",
        message=message,
        traceback=traceback,
        harness_error=True,
    )


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _observe(
    returncode: int,
    timed_out: bool,
    timeout: float,
    duration: float,
    stdout: str,
    stderr: str,
    result: dict[str, Any] | None,
    unusable: str = "",
) -> Observation:
    common: dict[str, Any] = {
        "duration": duration,
        "exit_status": returncode,
        "stdout": stdout,
        "stderr": stderr,
    }
    if timed_out:
        return Observation(Outcome.TIMEOUT, message=f"no result after {timeout:g}s", **common)
    if returncode < 0:
        name = signal_name(-returncode)
        note = f" after reporting {result['status']}" if result else ""
        return Observation(
            Outcome.CRASH,
            signal=name,
            message=f"killed by {name}{note}",
            result_written=result is not None,
            **common,
        )
    if result is None:
        why = f" ({unusable})" if unusable else ""
        return Observation(
            Outcome.CRASH,
            message=f"exited with status {returncode} without a result{why}",
            **common,
        )
    status = result["status"]
    exc_type = result.get("exc_type")
    fields: dict[str, Any] = {
        "exc_type": str(exc_type)[:200] if exc_type is not None else None,
        "message": str(result.get("message", "")),
        "traceback": str(result.get("traceback", "")),
        "result_written": True,
    }
    if status == "pass":
        return Observation(Outcome.PASS, **fields, **common)
    if status == "fail":
        return Observation(Outcome.FAIL, **fields, **common)
    if status == "skip":
        return Observation(Outcome.SKIP, **fields, **common)
    harness = result.get("phase") == "setup"
    return Observation(Outcome.ERROR, harness_error=harness, **fields, **common)
