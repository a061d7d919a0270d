"""Corpus files: reading, validating and selecting entries."""

# The backends an entry can name. Here, so that the command line's options can offer them
# without importing the entry's dataclasses (and packaging) at every start.
BACKENDS = ("cpu", "metal", "cuda")


def corpus_backend(backend: str) -> str:
    """The corpus's name for a backend as installed: every CUDA build (cuda12, cuda13) is cuda."""
    return "cuda" if backend.startswith("cuda") else backend
