"""``python -m mgradcheck.cli``: the same as the ``mgradcheck`` command."""

from mgradcheck.cli import main

main()
