"""A standalone reproducer script as the ``code`` of a corpus entry (``mgradcheck new``).

Pure: reads nothing but the text given. The script runs as written, with the
check helpers bound beside ``mx`` and ``np``; two things a script may do that
an entry cannot are dealt with here: its ``if __name__ == "__main__":`` block
(run, by naming the entry's module ``__main__``), and a bug it shows only by
printing a wrong value (its prints are kept and checked against the value a
person gives). A script that calls ``sys.exit`` is refused: the child reads
any exit as an error, so the release without the bug would look buggy too.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from mgradcheck.corpus.entry_format import ID_RE, LINK_RE
from mgradcheck.errors import UsageError
from mgradcheck.pysource import decoded

# Words in the code that name the transform a reproducer exercises, as corpus tags.
TAGS = (
    ("grad", ("mx.grad", "value_and_grad")),
    ("vjp", ("mx.vjp",)),
    ("jvp", ("mx.jvp",)),
    ("vmap", ("mx.vmap",)),
    ("compile", ("mx.compile",)),
    ("shapeless", ("shapeless=True",)),
    ("checkpoint", ("mx.checkpoint",)),
    ("custom-function", ("custom_function",)),
    ("export", ("export_function", "import_function")),
)
EXITS = {"exit", "quit", "_exit"}


@dataclass(frozen=True)
class Script:
    """A reproducer as read from its file: what the entry is made of."""

    path: Path
    text: str
    title: str | None  # the first line of its docstring, if it has one

    @property
    def tags(self) -> list[str]:
        return [tag for tag, words in TAGS if any(w in self.text for w in words)]


def read_script(path: Path) -> Script:
    """The script, checked: it exists, decodes and parses as Python would run it, and never
    exits the interpreter."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = decoded(data)  # as Python reads it, and `tests` reads a suite
    except ValueError as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    if not text.strip():
        raise UsageError(f"{path}: the script is empty")
    try:
        tree = ast.parse(text, str(path))
    except SyntaxError as exc:
        raise UsageError(f"{path}:{exc.lineno or 0}: syntax error: {exc.msg}") from None
    line = _exit_line(tree)
    if line is not None:
        raise UsageError(
            f"{path}:{line}: the script exits the interpreter; an entry cannot "
            "(every exit reads as an error): fail with assert_true(ok, message) or raise instead"
        )
    doc = ast.get_docstring(tree)
    title = doc.strip().splitlines()[0].strip() if doc and doc.strip() else None
    return Script(path, text, title)


def _exit_line(tree: ast.AST) -> int | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in EXITS:
                return node.lineno
        if isinstance(node, ast.Raise) and "SystemExit" in ast.unparse(node.exc or node):
            return node.lineno
    return None


def _has_main_block(text: str) -> bool:
    return re.search(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", text, re.M) is not None


def entry_code(script: Script, expect: str | None = None) -> str:
    """The entry's ``code``: the script as written, with what lets it run as an entry around it."""
    head = [f"# From {script.path.name} (mgradcheck new): review its oracle before committing."]
    if _has_main_block(script.text):
        head.append('__name__ = "__main__"  # so that the script\'s main block runs')
    tail: list[str] = []
    if expect is not None:
        head.append("print = Printed()  # keeps what the script prints, for the check below")
        tail = [
            "# What the script printed, against the right value given to mgradcheck new --expect.",
            f"assert_printed(print.text, {expect!r})",
        ]
    body = script.text.rstrip() + "\n"
    return "\n".join(head) + "\n" + body + ("\n".join(tail) + "\n" if tail else "")


def id_from(path: Path) -> str:
    """A kebab-case id from the script's file name."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", path.stem.lower())).strip("-")


def check_id(entry_id: str) -> str:
    if not ID_RE.fullmatch(entry_id):
        raise UsageError(
            f"--id: {entry_id!r} is not kebab-case (lowercase letters, digits, single dashes); "
            "give another --id"
        )
    return entry_id


def check_issue(url: str | None) -> str | None:
    if url is not None and not LINK_RE.fullmatch(url):
        raise UsageError(f"--issue: {url!r} is not an https:// link")
    return url
