"""A reproducer script as an entry's code: run as the child runs it, with the check helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mgradcheck.child import checks
from mgradcheck.corpus.scaffold import Script, entry_code, id_from


def run(code: str) -> dict[str, Any]:
    """As the child runs an entry's code: the helpers bound, a module name of its own."""
    scope: dict[str, Any] = {name: getattr(checks, name) for name in checks.__all__}
    scope["__name__"] = "__mgradcheck_entry__"
    exec(compile(code, "entry.yaml", "exec", dont_inherit=True), scope)
    return scope


def script(text: str) -> Script:
    return Script(Path("repro.py"), text, None)


def test_the_main_block_runs() -> None:
    text = 'def main():\n    assert 1 == 2, "ran"\n\nif __name__ == "__main__":\n    main()\n'
    with pytest.raises(AssertionError, match="ran"):
        run(entry_code(script(text)))
    run(text)  # as it was, the block would not have run at all


def test_a_printed_value_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    text = 'print("grad:", [6.0000001, -2.0])\n'
    run(entry_code(script(text), expect="grad: [6.0, -2.0]"))
    assert capsys.readouterr().out == "grad: [6.0000001, -2.0]\n"  # still printed
    with pytest.raises(checks.CheckFailed, match=r"printed .*expected 'grad: \[6.0, 2.0\]'"):
        run(entry_code(script(text), expect="grad: [6.0, 2.0]"))
    with pytest.raises(checks.CheckFailed):  # not as many numbers: the words differ
        run(entry_code(script('print("shape", (15,))\n'), expect="(3, 5)"))


def test_ids_from_file_names() -> None:
    assert id_from(Path("tests/Sort_VJP  bug.py")) == "sort-vjp-bug"
