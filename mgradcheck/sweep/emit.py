"""Write each shrunk finding as a ready corpus entry (a ``gradcheck:`` block) that reproduces it."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mgradcheck.atomic import write_text
from mgradcheck.clock import now
from mgradcheck.corpus.dump import dump
from mgradcheck.corpus.files import held_ids
from mgradcheck.run.observation import Environment
from mgradcheck.sweep.findings import Group
from mgradcheck.sweep.shrink import Shrunk

TOOL = "mgradcheck sweep"
# A crash is memory unsafety: the same spec may read garbage instead of dying,
# so its entry accepts a failed check too. Every other kind is a failed check.
OUTCOME: dict[str, Any] = {"crash": ["crash", "fail"], "timeout": "timeout"}


def title(group: Group, shrunk: Shrunk) -> str:
    """The group's title, with the transform combination that shows it when one is known."""
    found = group.matching(shrunk.result) or group.matching(group.representative())
    if not found:
        return group.title
    paths = re.sub(r" \((result|output) \d+\)$", "", found[0]["paths"])
    return f"{group.op}: {group.kind} in {paths}"


def entry_id(group: Group) -> str:
    parts = ["sweep", group.op, group.kind, group.check]
    text = "-".join(p for p in parts if p)
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def free_ids(groups: Sequence[Group], directory: Path) -> list[str]:
    """Each group's entry id, free in ``directory``: no file there is named for it, no corpus
    file under it holds it, and no other group takes it. The ids are known only once the
    sweep has run, too late to refuse without losing it, so a taken one gets the first free
    suffix (``-2``, ``-3``...): an entry already there, edited by hand or not, is never
    replaced, and the directory never holds an id twice."""
    taken = set(held_ids(directory))
    chosen = []
    for found in groups:
        base = name = entry_id(found)
        n = 1
        while name in taken or os.path.lexists(directory / f"{name}.yaml"):
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        chosen.append(name)
    return chosen


def _describe(group: Group, shrunk: Shrunk, env: Environment) -> str:
    result = shrunk.result
    lines = [
        f"Found by `mgradcheck sweep` on mlx {env.mlx} ({env.backend}): {group.title}.",
        f"Catalogue cases showing it: {', '.join(sorted({r.task.key for r in group.results}))}.",
    ]
    found = group.matching(result)
    if found:
        first = found[0]
        lines.append(
            f"{first['paths']}, traced ({', '.join(first['traced'])}), {first['dtype']}: {first['detail']}"
        )
    elif result.message:
        lines.append(result.message.splitlines()[0])
    if shrunk.steps:
        lines.append(f"Shrunk by: {'; '.join(shrunk.steps)}.")
    return "\n".join(textwrap.shorten(line, 600, placeholder=" ...") for line in lines)


def entry_data(
    group: Group, shrunk: Shrunk, env: Environment, name: str | None = None
) -> dict[str, Any]:
    """The corpus entry as plain data, keys in the corpus's usual order (its id ``name``, by
    default :func:`entry_id`'s)."""
    name = name or entry_id(group)
    outcome = OUTCOME.get(group.kind, "fail")
    observed = outcome[0] if isinstance(outcome, list) else outcome
    bug: dict[str, Any] = {"outcome": outcome, "affects": [env.backend or "cpu"], "fixed_in": None}
    if outcome == "fail":
        bug["match"] = re.escape(f"[{group.kind}]")
    spec: Mapping[str, Any] = shrunk.spec
    found_by = {
        "tool": TOOL,
        "mlx": env.mlx,
        "backend": env.backend,
        "date": now()[:10],
        "case": group.representative().task.case.id,
    }
    return {
        "id": name,
        "title": f"sweep: {title(group, shrunk)}",
        "summary": _describe(group, shrunk, env),
        "found_by": {k: v for k, v in found_by.items() if v is not None},
        "tags": ["sweep", group.results[0].task.case.family],
        "bug": bug,
        "timeout": 120,
        "evidence": [
            {
                "mlx": env.mlx,
                "backend": env.backend,
                "outcome": observed,
                "note": "found by mgradcheck sweep",
            }
        ],
        "notes": "Unreported: check it by hand, file it upstream (mgradcheck report upstream "
        f"{name}), then add the issue's link as upstream.report.",
        "gradcheck": dict(spec),
    }


def entry_text(group: Group, shrunk: Shrunk, env: Environment, name: str | None = None) -> str:
    body = dump(entry_data(group, shrunk, env, name))
    head = f"# Emitted by mgradcheck sweep on mlx {env.mlx} ({env.backend}); review before adding to the corpus.\n"
    return head + body


def write(
    directory: Path, group: Group, shrunk: Shrunk, env: Environment, name: str | None = None
) -> Path:
    """Write the entry as ``name`` (by default :func:`entry_id`'s; see :func:`free_ids`)."""
    name = name or entry_id(group)
    path = directory / f"{name}.yaml"
    write_text(path, entry_text(group, shrunk, env, name))
    return path
