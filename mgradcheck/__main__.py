"""``python -m mgradcheck``: the same as the ``mgradcheck`` command."""

from mgradcheck.cli import main

main()
