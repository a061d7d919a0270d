"""Corpus files: reading, validating and selecting entries."""
