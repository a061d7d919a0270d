"""pytest plugin: ``pytest --mgradcheck`` collects corpus entries as test items.

Without ``--mgradcheck`` the plugin only registers its options and changes nothing.
"""

from __future__ import annotations

from typing import Any


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("mgradcheck")
    group.addoption("--mgradcheck", action="store_true", default=False, help="Run the MLX bug corpus as tests.")
    group.addoption("--mgradcheck-corpus", action="append", default=[], metavar="PATH", help="Corpus file or directory (repeatable).")
