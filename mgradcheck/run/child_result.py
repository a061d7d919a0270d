"""What a child leaves behind, read as untrusted, and the observation made of it.

The result a child writes is the child's: it is read capped, never through a link
or from anything but a regular file, and must carry the nonce of its own spec. The
observation says what happened (pass, fail, error, crash, timeout) from the exit
status, the signal, the clock and that result, never from the child's word alone.
"""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path
from typing import Any

from mgradcheck.outcomes import Outcome
from mgradcheck.run.observation import Observation, strict

RESULT_BYTES = 1 << 20  # a result holds capped texts (see bootstrap): far below this


def late(result: dict[str, Any], timeout: float, duration: float) -> bool:
    """Whether a child the runner saw end only after its deadline ran past its timeout.

    The runner's clock is the judge while it watches; a runner that was stopped (SIGSTOP,
    SIGTSTP) or not scheduled sees the exit late, and the child's own measure of its run
    says whether it finished in time.
    """
    if duration <= timeout:
        return False
    own = result.get("duration")
    return not isinstance(own, (int, float)) or own > timeout


def read_result(fd: int, nonce: str) -> tuple[dict[str, Any] | None, str]:
    """The result the child wrote, or None and why not ("" when there is simply none).

    It is the child's to write, so it is read as untrusted: up to :data:`RESULT_BYTES`.
    """
    size = os.fstat(fd).st_size
    if size > RESULT_BYTES:
        return None, f"its result file holds {size} bytes, over the {RESULT_BYTES} read"
    raw = os.pread(fd, RESULT_BYTES + 1, 0)
    if not raw:
        return None, ""  # the child died before writing it
    try:
        data = json.loads(raw.decode("utf-8", "replace"), parse_constant=_no_constant)
    except ValueError:
        return None, ""  # half-written: the child died while writing it
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        return None, ""
    if data.get("nonce") != nonce:
        return None, "its result file holds a result written for another child"
    return strict(data), ""


def read_untrusted(path: Path, limit: int) -> tuple[bytes | None, str]:
    """Up to ``limit`` + 1 bytes of a file a child wrote: never through a link, only from a
    regular file (a FIFO would block the run). None and why not ("" when it is missing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, ""  # the child died before writing it
    except OSError as exc:
        return None, f"could not be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        if info.st_size > limit:
            return None, f"holds {info.st_size} bytes, over the {limit} read"
        raw = b""
        while len(raw) <= limit and (chunk := os.read(fd, limit + 1 - len(raw))):
            raw += chunk
    finally:
        os.close(fd)
    return raw, ""


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


def observe(
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
    exc_type = result.get("exc_type")
    fields: dict[str, Any] = {
        "exc_type": str(exc_type)[:200] if exc_type is not None else None,
        "message": str(result.get("message", "")),
        "traceback": str(result.get("traceback", "")),
        "result_written": True,
    }
    outcome = Outcome.from_child(str(result["status"]))
    harness = outcome is Outcome.ERROR and result.get("phase") == "setup"
    return Observation(outcome, harness_error=harness, **fields, **common)
