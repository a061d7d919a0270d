"""Corpus files: reading, validating and selecting entries."""

# The backends an entry can name. Here, so that the command line's options can offer them
# without importing the entry's dataclasses (and packaging) at every start.
BACKENDS = ("cpu", "metal", "cuda")
