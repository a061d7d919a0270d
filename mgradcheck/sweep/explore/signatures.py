"""MLX's operations as the installed release describes them: names, parameters, defaults.

The target interpreter writes each public callable's signature lines (see
``mgradcheck.child.gradcheck.entry_points.public_signatures``), e.g.
``conv2d(input: array, weight: array, /, stride: int | tuple[int, int] = 1, ...,
*, stream: StreamOrDevice = None) -> array``; this module parses them, so that a
release's new operations and keywords reach the generator without anyone
listing them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mgradcheck.errors import HarnessError
from mgradcheck.run.child_process import ChildCommand
from mgradcheck.run.display import Silent
from mgradcheck.run.observation import Environment
from mgradcheck.run.runner import Job, JobRun, Runner, RunOptions

POSITIONAL, EITHER, KEYWORD, VAR, VAR_KEYWORD = "positional", "either", "keyword", "var", "varkw"


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str  # "" when the signature gives none
    default: str | None  # the default's source text; None: required
    kind: str  # POSITIONAL (before "/"), EITHER, KEYWORD (after "*"), VAR (*args), VAR_KEYWORD

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in (VAR, VAR_KEYWORD)

    @property
    def is_array(self) -> bool:
        """Typed ``array`` (``mlx.core.array``), alone or among others (``scalar | array``)."""
        return any(
            part.strip().rsplit(".", 1)[-1] == "array" for part in self.annotation.split("|")
        )

    @property
    def is_array_list(self) -> bool:
        return self.annotation.replace(" ", "") in ("list[array]", "list[mlx.core.array]")


@dataclass(frozen=True)
class Operation:
    name: str  # qualified as the catalogue names them: mx.sin, linalg.inv, fft.fft, fast.rope
    params: tuple[Param, ...]
    returns: str

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse(name: str, line: str) -> Operation | None:
    """One signature line of the operation ``name`` (qualified); None when it is not one."""
    # An alias is described by the function it names: acos by "arccos(a: array, ...)".
    short = line.split("(", 1)[0]
    if not short.isidentifier() or ")" not in line:
        return None
    inner, returns, depth = "", "", 0
    for i, ch in enumerate(line[len(short) :]):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth == 0:
            inner = line[len(short) + 1 : len(short) + i]
            returns = line[len(short) + i + 1 :].strip().removeprefix("->").strip()
            break
    else:
        return None
    params: list[Param] = []
    kind = EITHER
    for raw in split_top(inner, ","):
        text = raw.strip()
        if not text:
            continue
        if text == "/":
            params = [Param(p.name, p.annotation, p.default, POSITIONAL) for p in params]
            continue
        if text == "*":
            kind = KEYWORD
            continue
        pieces = split_top(text, "=")
        head, default = pieces[0], ("=".join(pieces[1:]).strip() if len(pieces) > 1 else None)
        pname, _, annotation = head.partition(":")
        pname = pname.strip()
        this = kind
        if pname.startswith("**"):
            pname, this = pname[2:], VAR_KEYWORD
        elif pname.startswith("*"):
            pname, this, kind = pname[1:], VAR, KEYWORD
        if not pname.isidentifier():
            return None
        params.append(Param(pname, annotation.strip(), default, this))
    return Operation(name, tuple(params), returns)


def describe(signatures: Mapping[str, Sequence[str]]) -> tuple[list[Operation], list[str]]:
    """Each operation by its first signature that parses, and the names none of whose do."""
    operations, unparsed = [], []
    for name in sorted(signatures):
        parsed = (parse(name, line) for line in signatures[name])
        found = next((op for op in parsed if op is not None), None)
        if found is None:
            unparsed.append(name)
        else:
            operations.append(found)
    return operations, unparsed


def ask_target(command: ChildCommand, env: Environment, entry: str, what: str) -> Any:
    """What the child entry point ``write_ENTRY`` of :mod:`~mgradcheck.child.gradcheck.entry_points`
    writes, as JSON, run by the target interpreter (so it describes the release swept, not
    the one mgradcheck runs under)."""
    code = (
        f"from mgradcheck.child.gradcheck.entry_points import write_{entry}\n"
        f"write_{entry}(__mgradcheck_log__)\n"  # a file with no name, read back here
    )
    jobs = iter([Job(f"sweep-{entry.replace('_', '-')}", code, 120.0)])
    ended: list[JobRun] = []
    Runner(command, env, RunOptions(), Silent()).run_jobs(lambda: next(jobs, None), ended.append)
    try:
        return json.loads(ended[0].log)
    except (IndexError, ValueError):
        reason = ended[0].run.reason if ended else "not run"
        raise HarnessError(f"could not read the target MLX's {what} ({reason})") from None


def target_signatures(command: ChildCommand, env: Environment) -> dict[str, list[str]]:
    """Every public callable's signature lines, as the target MLX has them."""
    found = ask_target(command, env, "public_signatures", "signatures")
    return {str(k): [str(line) for line in v] for k, v in found.items()}
