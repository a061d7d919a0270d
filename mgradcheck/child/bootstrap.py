"""Run one corpus entry in this (fresh) interpreter and write its result as JSON.

Started by ``launch.py`` (``python -X faulthandler launch.py SPEC RESULT``).

This file runs under whatever Python and MLX the user points mgradcheck at, so
it imports only the standard library until it reaches NumPy and MLX. SPEC and
RESULT are normally ``/dev/fd/N``: files with no name that the parent passed
down, so no other child can touch them. A result that is missing or unreadable
means the child died, and the parent then reads the exit status instead.
"""

from __future__ import annotations

import json
import os
import sys
import time

from mgradcheck.child.contain import contained
from mgradcheck.child.descriptors import identity, passed_fd, reopen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RESULT_VERSION = 1
TAIL = 4000


def read_spec(path: str) -> dict[str, Any]:
    """Read the spec the parent wrote as JSON."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    if not isinstance(spec, dict):
        raise TypeError("the spec is not a dict")
    return spec


def entry_code(spec: dict[str, Any]) -> Any:
    """The entry's code compiled as it runs: named after its YAML file, on the lines it has there."""
    # Padded so that tracebacks name the entry's YAML file and the code's real line there.
    source = "\n" * (spec.get("code_line", 1) - 1) + spec["code"]
    return compile(source, spec.get("path", "<entry>"), "exec", dont_inherit=True)


# Must match mgradcheck.run.child_process, which this file cannot import.
NO_SPACE_STATUS = 75
NO_SPACE_MARK = "mgradcheck child: no space left to write the result"


def _write(path: str, result: dict[str, Any], seen: tuple[int, int] | None = None) -> None:
    """Write the result where the parent said: a descriptor it passed (``/dev/fd/N``), which
    it reads once this process is dead, or else a file, written aside and renamed."""
    # repr for what no JSON type holds (an old MLX's device query may answer anything): a
    # result that cannot be written would read as a crash.
    data = json.dumps(result, default=repr).encode("ascii")
    try:
        passed = passed_fd(path)
        if passed is not None:
            fd = reopen(passed, seen, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))  # whatever the entry wrote there before is gone
            finally:
                os.close(fd)
            return
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        import errno

        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            sys.stderr.write(f"\n{NO_SPACE_MARK}\n")
            sys.stderr.flush()
            os._exit(NO_SPACE_STATUS)
        raise


def _limit_memory(limit: int | None) -> None:
    if not limit:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))


def environment() -> dict[str, Any]:
    """What this interpreter runs: MLX version, backend and device, Python, platform."""
    env: dict[str, Any] = {
        "mlx": None,
        "backend": None,
        "device": None,
        "float64": False,
        "python": ".".join(str(n) for n in sys.version_info[:3]),
        "platform": f"{sys.platform}-{os.uname().machine if hasattr(os, 'uname') else 'unknown'}",
    }
    try:
        import mlx.core as mx
    except ImportError as exc:
        env["mlx_error"] = str(exc)
        return env
    # The families of mgradcheck.backends' table, asked of MLX here: the child imports nothing of ours.
    backend = "cpu"
    metal = getattr(mx, "metal", None)
    cuda = getattr(mx, "cuda", None)
    if metal is not None and metal.is_available():
        backend = "metal"
    elif cuda is not None and getattr(cuda, "is_available", lambda: False)():
        backend = "cuda"
    env.update(
        mlx=getattr(mx, "__version__", "unknown"),
        backend=backend,
        device=str(mx.default_device()),
        float64=hasattr(mx, "float64"),
    )
    if backend != "cpu":
        env.update(_gpu(mx, backend))
    return env


def _gpu(mx: Any, backend: str) -> dict[str, Any]:
    """The GPU's name and memory, and on CUDA the driver and the CUDA version it supports."""
    found: dict[str, Any] = {}
    info = getattr(mx, "device_info", None) or getattr(
        getattr(mx, "metal", None), "device_info", None
    )
    try:
        details = info() if info is not None else {}
    except Exception:  # noqa: BLE001 - an old release's device query is only a nicety
        details = {}
    found["device_name"] = details.get("device_name")
    found["device_memory"] = details.get("memory_size") or details.get("total_memory")
    if backend == "cuda":
        from mgradcheck.child.device import cuda_driver

        driver = cuda_driver() or {}
        found.update(driver=driver.get("driver"), cuda=driver.get("cuda"))
        first = (driver.get("devices") or [{}])[0]
        found["device_name"] = found["device_name"] or first.get("name")
        found["device_memory"] = found["device_memory"] or first.get("memory")
    return found


def _helpers(env: dict[str, Any]) -> dict[str, Any]:
    from mgradcheck.child import checks

    # The helpers, and ``np``: NumPy imported on first use.
    names: dict[str, Any] = {name: getattr(checks, name) for name in checks.__all__}
    if env["mlx"] is not None:
        import mlx.core as mx

        names["mx"] = mx
    return names


def _run_code(spec: dict[str, Any], env_globals: dict[str, Any]) -> None:
    compiled = entry_code(spec)
    scope = dict(env_globals)
    scope["__name__"] = "__mgradcheck_entry__"
    if spec.get("log"):  # a batch's log (see mgradcheck.child.batch_log): code names it thus
        scope["__mgradcheck_log__"] = spec["log"]
    exec(compiled, scope)


def _run_gradcheck(spec: dict[str, Any], env_globals: dict[str, Any]) -> None:
    from mgradcheck.child.gradcheck import run_declarative

    run_declarative(spec["gradcheck"], env_globals)


def main(argv: list[str]) -> int:
    spec_path, result_path = argv[1], argv[2]
    # What the result descriptor is now, before the entry can close or replace it.
    passed = passed_fd(result_path)
    seen = identity(passed) if passed is not None else None
    started = time.monotonic()
    result: dict[str, Any] = {"version": RESULT_VERSION, "status": "error", "phase": "setup"}
    spec: Any = None
    try:
        spec = read_spec(spec_path)
        result["nonce"] = spec.get("nonce")
        if sys.flags.optimize:
            raise RuntimeError(
                "the child runs with asserts off (-O or PYTHONOPTIMIZE): its oracles would not run"
            )
        _limit_memory(spec.get("memory_limit"))
        env = environment()
        contained()  # MLX imported while the process moved into its cgroup; nothing else ran
        result["environment"] = env
        if spec.get("probe_only"):
            result.update(status="pass", phase="probe")
        else:
            env_globals = _helpers(env)
            result["phase"] = "entry"
            if spec.get("gradcheck") is not None:
                _run_gradcheck(spec, env_globals)
            else:
                _run_code(spec, env_globals)
            result.update(status="pass")
    except AssertionError as exc:
        result.update(status="fail", **_describe(exc))
    except MemoryError as exc:
        limit = spec.get("memory_limit") if isinstance(spec, dict) else None
        result.update(status="error", **_describe(exc))
        if limit:
            result["message"] = f"exceeded the memory ceiling of {int(limit) >> 20} MiB"
    except SystemExit as exc:
        result.update(
            status="error",
            exc_type="SystemExit",
            message=_cap(f"entry called sys.exit({exc.code!r})"),
        )
    except BaseException as exc:  # noqa: BLE001 - whatever the entry raises is data
        result.update(status="error", **_describe(exc))
    result["duration"] = time.monotonic() - started
    _write(result_path, result, seen)
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


def _describe(exc: BaseException) -> dict[str, Any]:
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "exc_type": type(exc).__name__[:200],
        "message": _cap(str(exc)),
        "traceback": _cap(text),
    }


def _cap(text: str) -> str:
    """Head and tail of a text that may be huge (a check's observed array, say)."""
    if len(text) <= TAIL:
        return text
    return (
        text[: TAIL // 4]
        + f"\n[... {len(text) - TAIL} characters not kept ...]\n"
        + text[-(TAIL - TAIL // 4) :]
    )
