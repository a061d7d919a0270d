"""Run one corpus entry in this (fresh) interpreter and write its result as JSON.

Usage: python -X faulthandler bootstrap.py SPEC.json RESULT.json

This file runs under whatever Python and MLX the user points mgradcheck at, so
it imports only the standard library until it reaches NumPy and MLX, and it
loads the rest of ``mgradcheck.child`` by file location rather than from the
parent's site-packages. The result file is written atomically (temp + rename):
a result file that is missing or unreadable means the child died, and the
parent then reads the exit status instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from typing import Any

RESULT_VERSION = 1
TAIL = 4000


def _load_package() -> None:
    """Make ``import mgradcheck`` resolve to the copy this file belongs to."""
    pkg_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "mgradcheck" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "mgradcheck", os.path.join(pkg_dir, "__init__.py"), submodule_search_locations=[pkg_dir]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mgradcheck"] = module
    spec.loader.exec_module(module)


def _write(path: str, result: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
    }
    try:
        import mlx.core as mx
    except ImportError as exc:
        env["mlx_error"] = str(exc)
        return env
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
    return env


def _helpers(env: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    from mgradcheck.child import checks

    names: dict[str, Any] = {name: getattr(checks, name) for name in checks.__all__}
    names["np"] = np
    if env["mlx"] is not None:
        import mlx.core as mx

        names["mx"] = mx
    return names


def _run_code(spec: dict[str, Any], env_globals: dict[str, Any]) -> None:
    code = spec["code"]
    # Pad so that tracebacks name the entry's YAML file and the code's real line there.
    source = "\n" * (spec.get("code_line", 1) - 1) + code
    compiled = compile(source, spec.get("path", "<entry>"), "exec", dont_inherit=True)
    scope = dict(env_globals)
    scope["__name__"] = "__mgradcheck_entry__"
    exec(compiled, scope)


def _run_gradcheck(spec: dict[str, Any], env_globals: dict[str, Any]) -> None:
    from mgradcheck.child.gradcheck import run_declarative

    run_declarative(spec["gradcheck"], env_globals)


def main(argv: list[str]) -> int:
    spec_path, result_path = argv[1], argv[2]
    started = time.monotonic()
    result: dict[str, Any] = {"version": RESULT_VERSION, "status": "error", "phase": "setup"}
    spec: Any = None
    try:
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
        _limit_memory(spec.get("memory_limit"))
        _load_package()
        env = environment()
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
            status="error", exc_type="SystemExit", message=f"entry called sys.exit({exc.code!r})"
        )
    except BaseException as exc:
        result.update(status="error", **_describe(exc))
    result["duration"] = time.monotonic() - started
    _write(result_path, result)
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


def _describe(exc: BaseException) -> dict[str, Any]:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "exc_type": type(exc).__name__,
        "message": str(exc)[:TAIL],
        "traceback": text[-TAIL:],
    }


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # never shadow the environment's modules with ours
    sys.exit(main(sys.argv))
