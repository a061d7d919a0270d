"""What a child did, recorded from outside it. Round-trips through JSON."""

from __future__ import annotations

import math
import re
import reprlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from mgradcheck.outcomes import Outcome

MESSAGE_CHARS = 4000  # of a message: its head and tail
TRACEBACK_CHARS = 16000  # of a traceback
_SURROGATE = "[\ud800-\udfff]"  # compiled by re on first use: most text is ASCII


def capped(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail, saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters not kept ...]\n{text[-tail:]}"


def strict(value: Any) -> Any:
    """``value`` (decoded JSON) as strict JSON can hold it: lone surrogates become U+FFFD,
    NaN and infinities None."""
    if isinstance(value, str):
        return value if value.isascii() else re.sub(_SURROGATE, "\ufffd", value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {strict(str(k)): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


# The JSON types a field of a record below may hold, by the name its annotation gives, and
# how a message names each.
_JSON_TYPES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
               "None": "null"}  # fmt: skip


def _holds(value: Any, name: str) -> bool:
    if name == "None":
        return value is None
    if name == "bool" or isinstance(value, bool):
        return name == "bool" and isinstance(value, bool)
    if name == "float" and isinstance(value, (int, float)):
        try:
            return math.isfinite(float(value))
        except OverflowError:  # an integer of hundreds of digits
            return False
    if name == "int":
        return isinstance(value, int) and abs(value) < 2**63
    return name == "str" and isinstance(value, str)


def typed_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The items of ``data`` that are fields of the dataclass ``cls``, each checked against the
    field's annotation; ValueError names the first that does not hold. A report read back is
    anyone's file: a string where a number belongs would fail later, far from the file."""
    values = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value, allowed = data[f.name], str(f.type).replace(" ", "").split("|")
        if all(a in _JSON_TYPES for a in allowed) and not any(_holds(value, a) for a in allowed):
            wanted = " or ".join(_JSON_TYPES[a] for a in allowed)
            raise ValueError(f"{f.name}: {reprlib.repr(value)} is not {wanted}")
        values[f.name] = value
    return values


@dataclass(frozen=True)
class Environment:
    """Where a run happened: the interpreter, its MLX, backend and device."""

    mlx: str | None
    backend: str | None
    device: str | None
    python: str
    platform: str
    float64: bool = False
    interpreter: str = ""
    mgradcheck: str = ""
    device_name: str | None = None  # the GPU, e.g. "NVIDIA H100 80GB HBM3"
    device_memory: int | None = None  # its memory, in bytes
    driver: str | None = None  # the NVIDIA driver's version
    cuda: str | None = None  # the CUDA version that driver supports

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Environment:
        return cls(**typed_fields(cls, data))

    @property
    def label(self) -> str:
        return f"mlx {self.mlx or '?'} {self.backend or '?'} py{self.python}"

    @property
    def hardware(self) -> str:
        """The GPU, its memory and driver, when there is one: for reports and progress lines."""
        if not self.device_name:
            return ""
        parts = [self.device_name]
        if self.device_memory:
            parts.append(f"{self.device_memory / 2**30:.0f} GiB")
        if self.driver:
            parts.append(f"driver {self.driver}" + (f", CUDA {self.cuda}" if self.cuda else ""))
        return ", ".join(parts)


@dataclass(frozen=True)
class Observation:
    """One run of one entry's reproducer."""

    outcome: Outcome
    duration: float
    exit_status: int | None = None
    signal: str | None = None
    exc_type: str | None = None
    message: str = ""
    traceback: str = ""
    stdout: str = ""
    stderr: str = ""
    result_written: bool = False
    harness_error: bool = False

    def __post_init__(self) -> None:
        # Whatever the child wrote, however this was made (a result, a report read back):
        # every report holds a bounded head and tail of it.
        for name, limit in (("message", MESSAGE_CHARS), ("traceback", TRACEBACK_CHARS)):
            text = getattr(self, name)
            if len(text) > limit:
                object.__setattr__(self, name, capped(text, limit))

    @property
    def reason(self) -> str:
        """One short line saying why this run ended as it did."""
        if self.outcome is Outcome.CRASH:
            return self.signal or f"exit status {self.exit_status}"
        if self.outcome is Outcome.TIMEOUT:
            return self.message or "timed out"
        text = self.message.strip().splitlines()[0] if self.message.strip() else ""
        if self.exc_type and self.outcome is Outcome.ERROR:
            text = f"{self.exc_type}: {text}" if text else self.exc_type
        return text

    @property
    def evidence_text(self) -> str:
        """Everything a bug's ``match`` regex is searched in."""
        return "\n".join((self.exc_type or "", self.message, self.traceback, self.stderr))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome.label
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        values = typed_fields(cls, data)
        values["outcome"] = Outcome.from_label(data["outcome"])
        return cls(**values)


def not_run() -> Observation:
    return Observation(Outcome.NOT_RUN, 0.0, message="not run: the run was stopped")


@dataclass(frozen=True)
class Capture:
    """A capped view of a stream: its head and tail, and how much was dropped between."""

    head: bytes = b""
    tail: bytes = b""
    total: int = 0
    dropped: int = field(default=0)

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes not kept ...]\n" if self.dropped else ""
        raw = self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")
        return raw
