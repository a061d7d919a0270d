"""MkDocs hook: the corpus page's table and figures, from the repository's corpus at every build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mgradcheck.reports.corpus_table import fill
from mgradcheck.run import stages


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    if page.file.src_uri != "corpus.md":
        return markdown
    corpus = Path(config.config_file_path).parent / "corpus"
    return fill(markdown, stages.load_corpus([corpus]))
