"""What the child runs: a declarative ``gradcheck:`` corpus entry, or a batch of sweep cases."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mgradcheck.child.batch_log import BatchLog
from mgradcheck.child.checks import CheckFailed
from mgradcheck.child.gradcheck import point
from mgradcheck.child.gradcheck.api import check_spec


def run_declarative(spec: Mapping[str, Any], scope: Mapping[str, Any]) -> None:
    """The child's entry point for a ``gradcheck:`` corpus entry: fail on any disagreement."""
    result = check_spec(spec, scope)
    if not result.ok:
        raise CheckFailed(result.report())
    if result.checked == 0:
        reasons = "; ".join((result.unsupported + result.not_checked)[:3])
        raise RuntimeError(f"gradcheck checked nothing: {reasons}")
    print(result.report())


def run_batch(specs: Sequence[Mapping[str, Any]], log_path: str, scope: Mapping[str, Any]) -> None:
    """Run several specs in this child, appending one JSON line per event to ``log_path``
    (see :mod:`mgradcheck.child.batch_log`).

    A "start" line precedes each case and a "done" line follows it, flushed at
    once, so that when a case crashes the child the parent knows which one did;
    each derivative path is named on stderr before it runs, for the same reason.
    The "done" line says how long the case took (``duration``, in seconds).
    """
    point.trace = sys.stderr
    log = BatchLog(log_path)
    for index, spec in enumerate(specs):
        log.write(json.dumps({"item": index, "event": "start"}))
        started = time.monotonic()
        try:
            line: dict[str, Any] = {"result": check_spec(spec, scope).to_json()}
        except Exception as exc:  # noqa: BLE001 - reported per case
            line = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        duration = time.monotonic() - started
        log.write(json.dumps({"item": index, "event": "done", "duration": duration, **line}))


def public_callables() -> dict[str, list[str]]:
    """The public functions of ``mlx.core`` and its ``linalg``, ``fft`` and ``fast`` modules."""
    import inspect

    import mlx.core as mx

    names = {}
    for ns, module in (("mx", mx), ("linalg", mx.linalg), ("fft", mx.fft), ("fast", mx.fast)):
        names[ns] = sorted(
            n for n in dir(module)
            if not n.startswith("_") and callable(obj := getattr(module, n))
            and not inspect.isclass(obj) and not inspect.ismodule(obj)
        )  # fmt: skip
    return names


def write_public_callables(path: str) -> None:
    """The child's entry point for ``sweep --coverage``: :func:`public_callables` as JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(public_callables(), f)


def signatures(fn: Any, name: str) -> list[str]:
    """``fn``'s signatures as MLX writes them, one per overload: ``sin(a: array, /, ...) -> array``.

    nanobind puts them at the head of the docstring with the defaults written out
    (its ``__nb_signature__`` holds placeholders such as ``\\0`` for them instead);
    a function written in Python has an ordinary signature.
    """
    import inspect

    lines = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    found = [line.strip() for line in lines if line.strip().startswith(f"{name}(")]
    if found:
        return found
    for overload in getattr(fn, "__nb_signature__", None) or ():
        text = str(overload[0])
        found.append(text[len("def ") :] if text.startswith("def ") else text)
    if found:
        return found
    try:
        return [f"{name}{inspect.signature(fn)}"]
    except (TypeError, ValueError):
        return []


def public_signatures() -> dict[str, list[str]]:
    """:func:`public_callables`, qualified (``mx.sin``, ``linalg.inv``), with their signatures."""
    import mlx.core as mx

    modules = {"mx": mx, "linalg": mx.linalg, "fft": mx.fft, "fast": mx.fast}
    return {
        f"{ns}.{name}": signatures(getattr(modules[ns], name), name)
        for ns, names in public_callables().items()
        for name in names
    }


def write_public_signatures(path: str) -> None:
    """The child's entry point for the sweep's generated calls: :func:`public_signatures` as JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(public_signatures(), f)
