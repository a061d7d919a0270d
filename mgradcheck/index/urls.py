"""An index URL from the user, checked before it reaches an installer.

Its own module, light (no packaging, no HTML parser), so that ``--index-url`` is
checked as the command line is parsed without importing the index machinery.
"""

from __future__ import annotations

import re
import urllib.parse

from mgradcheck.errors import ReleaseError

# Whitespace or a control character would let one argument read as several, or as an option.
_UNSAFE_URL = re.compile(r"[\s\x00-\x1f\x7f]")


def check_index_url(url: str) -> str:
    """One http(s) URL with a host, or a file URL with a path: nothing an installer could read as more."""
    if _UNSAFE_URL.search(url):
        raise ReleaseError(f"index URL {url!r} holds whitespace or control characters")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ReleaseError(f"index URL {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https", "file") or url.startswith("-"):
        raise ReleaseError(f"index URL {url!r} must start with http://, https:// or file://")
    if parts.scheme != "file" and not parts.hostname:
        raise ReleaseError(f"index URL {url!r} names no host")
    if parts.scheme == "file" and not parts.path.strip("/"):
        raise ReleaseError(f"index URL {url!r} names no directory")
    return url.rstrip("/")


__all__ = ["check_index_url"]
