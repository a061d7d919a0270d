"""``mgradcheck report upstream ID --as-test``: a corpus entry as a regression test for MLX.

The test is written in the style of MLX's ``python/tests`` (``test_autograd.py``):
``import mlx_tests``, a ``mlx_tests.MLXTestCase`` with one method holding the
entry's code, and ``mlx_tests.MLXTestRunner()`` under ``__main__``. The check
helpers the code uses come written out above the class (see
:mod:`mgradcheck.sweep.inline_checks`); a failed check is an ``AssertionError``,
so the test fails while the bug is present and passes once it is fixed.

MLX's ``python/tests`` has its own ``mlx_tests.py``; a test written into a
directory of its own gets a minimal one beside it (never over one already
there), so that it runs as it stands: ``python test_x.py``, ``mgradcheck tests DIR``.
Only ``code:`` entries are written: a ``gradcheck:`` entry's reproducer is made
by running it (``report upstream ID`` prints that script).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from mgradcheck.atomic import write_text
from mgradcheck.corpus.entry import Entry
from mgradcheck.errors import UsageError
from mgradcheck.sweep import inline_checks

INDENT = " " * 8

# What a test beside it needs of MLX's python/tests/mlx_tests.py, and no more.
MLX_TESTS = """\
# A minimal stand-in for MLX's python/tests/mlx_tests.py: in MLX's tree, use that one.
import os
import unittest

import mlx.core as mx
import numpy as np


class MLXTestRunner(unittest.TestProgram):
    pass


class MLXTestCase(unittest.TestCase):
    def setUp(self):
        self.default = None
        device = os.getenv("DEVICE", None)  # "cpu" or "gpu", as MLX's own tests take it
        if device is not None:
            self.default = mx.default_device()
            mx.set_default_device(getattr(mx, device))

    def tearDown(self):
        if self.default is not None:
            mx.set_default_device(self.default)

    def assertEqualArray(self, mx_res, expected, atol=1e-2, rtol=1e-2):
        self.assertEqual(tuple(mx_res.shape), tuple(expected.shape), "shape mismatch")
        self.assertTrue(
            np.allclose(np.array(mx_res), np.array(expected), atol=atol, rtol=rtol),
            "values mismatch",
        )
"""


def _words(entry_id: str) -> list[str]:
    return [w for w in re.split(r"[^A-Za-z0-9]+", entry_id) if w]


def test_name(entry: Entry) -> str:
    """The test method's name: ``test_`` and the entry's id in snake case."""
    return "test_" + "_".join(w.lower() for w in _words(entry.id))


def class_name(entry: Entry) -> str:
    return "Test" + "".join(w[:1].upper() + w[1:] for w in _words(entry.id))


def file_name(entry: Entry) -> str:
    return test_name(entry) + ".py"


def _indent(code: str) -> str:
    """``code`` indented into a method's body, but for the lines inside a multi-line string
    (indenting those would change the string's value)."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass  # the compile below names what is wrong
    return "\n".join(
        line if n in inside or not line.strip() else INDENT + line
        for n, line in enumerate(code.splitlines(), start=1)
    )


def _globals(code: str) -> str:
    """The ``global`` line a method needs for the module-level names the code's functions
    declare ``global``: without it, the method binds them as its own locals ("" for none)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""  # the compile below names what is wrong
    names = sorted(
        {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    )
    return f"{INDENT}global {', '.join(names)}\n" if names else ""


def _comment(text: str) -> str:
    return " ".join(text.split())


def render(entry: Entry) -> str:
    """The entry as a unittest module in MLX's style; UsageError when it cannot be one."""
    if entry.code is None:
        raise UsageError(
            f"{entry.id} is a gradcheck: entry; --as-test writes code: entries only "
            f"('report upstream {entry.id}' prints a script of it to start one from)"
        )
    helpers = inline_checks.helpers(entry.code, entry.id)
    links = [
        f"# {label}: {_comment(url)}"
        for label, url in (("Reported", entry.upstream.report), ("Fixed", entry.upstream.fix))
        if url
    ]
    header = [f"# {_comment(entry.title)}", *links, f"# From mgradcheck's corpus entry {entry.id}."]
    body = _indent(entry.code.rstrip()) or INDENT + "pass"
    imports = "import unittest\n\nimport mlx.core as mx\nimport mlx_tests\nimport numpy as np\n"
    title = _comment(entry.title).replace("\\", "\\\\").replace('"', '\\"')
    text = (
        "\n".join(header)
        + f"\n\n{imports}\n\n"
        + (f"{helpers}\n\n" if helpers else "")
        + f"class {class_name(entry)}(mlx_tests.MLXTestCase):\n"
        + f"    def {test_name(entry)}(self):\n"
        + f'{INDENT}"""{title}"""\n'
        + _globals(entry.code)
        + f"{body}\n\n\n"
        + 'if __name__ == "__main__":\n    mlx_tests.MLXTestRunner()\n'
    )
    try:
        compile(text, file_name(entry), "exec")
    except SyntaxError as exc:
        raise UsageError(
            f"{entry.path}:{entry.code_line}: {entry.id}'s code cannot stand in a test method "
            f"({exc.msg}); write its test by hand"
        ) from None
    return text


def write(entry: Entry, directory: Path) -> list[Path]:
    """Write the test into ``directory``, and a minimal ``mlx_tests.py`` unless one is there;
    return the files written."""
    text = render(entry)
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / file_name(entry)]
    write_text(written[0], text)
    helper = directory / "mlx_tests.py"
    if not helper.exists():
        write_text(helper, MLX_TESTS)
        written.append(helper)
    return written


__all__ = ["MLX_TESTS", "class_name", "file_name", "render", "test_name", "write"]
