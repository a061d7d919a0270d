"""Upstream test suites as corpora: collect a suite's tests, run each in its own child, across releases."""
