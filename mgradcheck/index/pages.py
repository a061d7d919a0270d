"""One project's files on a package index: the simple API's JSON and HTML pages, or a wheel directory.

Only file names are read (PEP 503/691): a wheel's name says its project,
version and tags, which is all a listing of releases needs.
"""

from __future__ import annotations

import base64
import json
import netrc
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from mgradcheck.errors import EnvironmentFailure

TIMEOUT = 30.0
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


class IndexUnreachable(EnvironmentFailure):
    """The package index did not answer, or answered with an error."""


def redact(url: str) -> str:
    """The URL without a password, for messages and file names shown to people."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True)
class WheelFile:
    project: str
    version: Version
    tags: frozenset[Tag]
    yanked: bool = False
    requires_python: str | None = None
    size: int | None = None  # bytes, where the listing says (PEP 700 JSON pages, a directory)


def wheel_file(
    filename: str,
    yanked: bool = False,
    requires_python: str | None = None,
    size: int | None = None,
) -> WheelFile | None:
    """The wheel a file name describes, or None for sdists and names that are not wheels."""
    if not filename.endswith(".whl"):
        return None
    try:
        name, version, _, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return WheelFile(str(name), version, frozenset(tags), yanked, requires_python, size)


def parse_json_page(data: Mapping[str, Any]) -> list[WheelFile]:
    """Files of a PEP 691 JSON project page; ``yanked`` is false or a reason."""
    wheels = []
    for item in data.get("files", []):
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str):
            continue
        size = item.get("size")
        wheel = wheel_file(
            item["filename"],
            bool(item.get("yanked")),
            item.get("requires-python"),
            size if isinstance(size, int) else None,
        )
        if wheel is not None:
            wheels.append(wheel)
    return wheels


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.files: list[WheelFile] = []
        self._attrs: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._attrs, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag != "a" or self._attrs is None:
            return
        href = urllib.parse.urlsplit(self._attrs.get("href") or "").path
        name = "".join(self._text).strip() or urllib.parse.unquote(href.rsplit("/", 1)[-1])
        yanked = "data-yanked" in self._attrs
        wheel = wheel_file(name, yanked, self._attrs.get("data-requires-python"))
        if wheel is not None:
            self.files.append(wheel)
        self._attrs = None


def parse_html_page(text: str) -> list[WheelFile]:
    """Files of a PEP 503 HTML project page, for indexes without the JSON API."""
    parser = _Anchors()
    parser.feed(text)
    return parser.files


def wheels_in(directory: Path) -> list[WheelFile]:
    """The wheels in a ``--find-links`` directory, read from their file names."""
    found = (
        wheel_file(p.name, size=p.stat().st_size)
        for p in sorted(directory.iterdir())
        if p.is_file()
    )
    return [w for w in found if w is not None]


def credentials(parts: urllib.parse.SplitResult) -> str | None:
    """``user:password`` for an index: written into its URL, else its host's ``.netrc`` entry.

    pip and uv both read ``$NETRC`` (default ``~/.netrc``), so an index they can
    install from with it is one this listing can read too.
    """
    if parts.username is not None:
        return (
            f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        found = netrc.netrc(os.environ.get("NETRC") or None).authenticators(parts.hostname)
    except (OSError, netrc.NetrcParseError):
        return None  # no .netrc, or one the installers could not read either
    if found is None:
        return None
    login, _, password = found
    return f"{login}:{password or ''}"


def fetch_project(index_url: str, project: str, timeout: float = TIMEOUT) -> list[WheelFile]:
    """One project's files from a simple index; a project the index lacks has none."""
    # Here, not at the top: urllib.request brings http.client, email and more, which every
    # command that never asks an index (a plain ``run``, ``--help``) would pay for.
    import urllib.error
    import urllib.request

    url = f"{index_url.rstrip('/')}/{canonicalize_name(project)}/"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        local = Path(urllib.request.url2pathname(parts.path))
        url = (local / "index.html").as_uri() if local.is_dir() else url
    headers = {"Accept": ACCEPT, "User-Agent": "mgradcheck"}
    token = credentials(parts)
    if token is not None:
        # urllib sends no credentials of its own; indexes with a token need them.
        headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return []
        raise IndexUnreachable(
            f"the package index {redact(index_url)} answered {exc.code} for {project}"
        ) from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        if parts.scheme == "file":
            return []
        reason = getattr(exc, "reason", exc)
        raise IndexUnreachable(
            f"cannot reach the package index {redact(index_url)} ({reason}); "
            "offline? use --find-links DIR with local wheels, or an environment already cached"
        ) from None
    text = body.decode("utf-8", "replace")
    if "json" in kind or text.lstrip().startswith("{"):
        try:
            return parse_json_page(json.loads(text))
        except ValueError:
            raise IndexUnreachable(
                f"the package index {redact(index_url)} sent unreadable JSON for {project}"
            ) from None
    return parse_html_page(text)
