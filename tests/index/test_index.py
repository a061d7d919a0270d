"""Listing MLX releases from an index or a wheel directory, and checking what users type."""

from __future__ import annotations

import base64
import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from packaging.tags import Tag
from packaging.version import Version

from mgradcheck.errors import ReleaseError
from mgradcheck.index.installable import (
    DEFAULT_INDEX,
    Source,
    Target,
    check_index_url,
    list_releases,
    parse_range,
    parse_version,
    select_releases,
)
from mgradcheck.index.pages import (
    IndexUnreachable,
    WheelFile,
    parse_html_page,
    parse_json_page,
    redact,
    wheel_file,
)

LINUX = Target(
    backend="cpu",
    system="Linux",
    platform="linux-x86_64",
    python="3.11",
    python_full="3.11.7",
    interpreter="/usr/bin/python3.11",
    tags=frozenset(
        {
            Tag("cp311", "cp311", "manylinux_2_35_x86_64"),
            Tag("cp311", "cp311", "manylinux_2_31_x86_64"),
            Tag("py3", "none", "manylinux_2_35_x86_64"),
            Tag("py3", "none", "any"),
        }
    ),
)
MAC = Target(
    "metal",
    "Darwin",
    "darwin-arm64",
    "3.11",
    "3.11.7",
    "python3",
    frozenset({Tag("cp311", "cp311", "macosx_14_0_arm64")}),
)


def page(*files: tuple[str, Any]) -> dict[str, Any]:
    return {
        "meta": {"api-version": "1.1"},
        "files": [{"filename": f, "yanked": y, "url": f} for f, y in files],
    }


PAGES = {
    "mlx": page(
        ("mlx-0.29.0-cp311-cp311-manylinux_2_35_x86_64.whl", False),
        ("mlx-0.29.1-cp311-cp311-manylinux_2_35_x86_64.whl", "broken build"),
        ("mlx-0.29.2-cp311-cp311-manylinux_2_35_x86_64.whl", False),
        ("mlx-0.29.2-cp311-cp311-macosx_14_0_arm64.whl", False),
        ("mlx-0.30.0rc1-cp311-cp311-manylinux_2_35_x86_64.whl", False),
        ("mlx-0.30.0-cp312-cp312-manylinux_2_35_x86_64.whl", False),  # not this Python
        ("mlx-0.26.1-cp311-cp311-manylinux_2_31_x86_64.whl", False),  # from before mlx-cpu existed
        ("mlx-0.29.3-cp311-cp311-manylinux_2_35_x86_64.whl", False),  # no mlx-cpu of that version
        ("mlx-0.10.0.tar.gz", False),
    ),
    "mlx-cpu": page(
        ("mlx_cpu-0.29.0-py3-none-manylinux_2_35_x86_64.whl", False),
        ("mlx_cpu-0.29.1-py3-none-manylinux_2_35_x86_64.whl", False),
        ("mlx_cpu-0.29.2-py3-none-manylinux_2_35_x86_64.whl", False),
        ("mlx_cpu-0.30.0rc1-py3-none-manylinux_2_35_x86_64.whl", False),
        ("mlx_cpu-0.30.0-py3-none-manylinux_2_35_x86_64.whl", False),
    ),
}


def files() -> dict[str, list[WheelFile]]:
    return {name: parse_json_page(data) for name, data in PAGES.items()}


def test_linux_cpu_needs_a_compatible_mlx_and_mlx_cpu_of_the_same_version() -> None:
    listing = select_releases(files(), LINUX, Source())
    # 0.26.1 predates the split: its mlx wheel holds the CPU backend.
    assert [str(v) for v in listing.versions] == ["0.26.1", "0.29.0", "0.29.2"]
    assert (listing.skipped_pre, listing.skipped_yanked) == (1, 1)


def test_linux_cuda_always_needs_its_companion() -> None:
    cuda = dataclasses.replace(LINUX, backend="cuda")
    assert select_releases(files(), cuda, Source()).versions == []
    wheels = {
        **files(),
        "mlx-cuda-12": [wheel_file("mlx_cuda_12-0.29.2-py3-none-manylinux_2_35_x86_64.whl")],
    }
    assert [str(v) for v in select_releases(wheels, cuda, Source()).versions] == ["0.29.2"]  # type: ignore[arg-type]
    assert cuda.requirement(Version("0.29.2")) == "mlx[cuda]==0.29.2"


def test_pre_releases_and_yanked_only_on_request() -> None:
    listing = select_releases(files(), LINUX, Source(), pre=True, yanked=True)
    assert [str(v) for v in listing.versions] == [
        "0.26.1",
        "0.29.0",
        "0.29.1",
        "0.29.2",
        "0.30.0rc1",
    ]
    assert listing.get(Version("0.29.1")) is not None and listing.get(Version("0.29.1")).yanked  # type: ignore[union-attr]


def test_macos_needs_only_mlx() -> None:
    assert [str(v) for v in select_releases(files(), MAC, Source()).versions] == ["0.29.2"]


def test_requires_python_is_respected() -> None:
    wheel = wheel_file("mlx-0.29.0-cp311-cp311-manylinux_2_35_x86_64.whl", requires_python=">=3.12")
    companion = wheel_file("mlx_cpu-0.29.0-py3-none-manylinux_2_35_x86_64.whl")
    assert wheel is not None and companion is not None
    assert select_releases({"mlx": [wheel], "mlx-cpu": [companion]}, LINUX, Source()).versions == []


def test_requirement_per_backend() -> None:
    assert LINUX.requirement(Version("0.29.0")) == "mlx[cpu]==0.29.0"
    assert MAC.requirement(Version("0.29.0")) == "mlx==0.29.0"


def test_html_pages_are_read_too() -> None:
    html = (
        '<html><body><a href="../../files/mlx-0.29.0-cp311-cp311-manylinux_2_35_x86_64.whl#sha256=ab">'
        "mlx-0.29.0-cp311-cp311-manylinux_2_35_x86_64.whl</a>"
        '<a href="x/mlx-0.29.1-cp311-cp311-manylinux_2_35_x86_64.whl" data-yanked="">'
        "mlx-0.29.1-cp311-cp311-manylinux_2_35_x86_64.whl</a></body></html>"
    )
    wheels = parse_html_page(html)
    assert [(str(w.version), w.yanked) for w in wheels] == [("0.29.0", False), ("0.29.1", True)]


def test_a_wheel_directory_is_listed_from_file_names(fake_wheels: Path) -> None:
    listing = list_releases(Source(None, fake_wheels), Target.current("cpu"))
    assert [str(v) for v in listing.versions] == [
        "1.0.0",
        "1.1.0",
        "1.2.0",
        "1.3.0",
        "1.4.0",
        "1.5.0",
        "1.6.0",
    ]


class _Index(BaseHTTPRequestHandler):
    accepts: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.accepts.append(self.headers.get("Accept", ""))
        name = self.path.strip("/").split("/")[-1]
        if name not in PAGES:
            self.send_error(404)
            return
        body = json.dumps(PAGES[name]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def index_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_lists_from_an_http_index_with_the_json_api(index_url: str) -> None:
    _Index.accepts.clear()
    listing = list_releases(Source(index_url), LINUX)
    assert [str(v) for v in listing.versions] == ["0.26.1", "0.29.0", "0.29.2"]
    assert all("application/vnd.pypi.simple.v1+json" in a for a in _Index.accepts)


class _PrivateIndex(_Index):
    """An index that answers only with the right credentials, as a private one does."""

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(b"reader:t0ken").decode()
        if self.headers.get("Authorization") != expected:
            self.send_error(401)
            return
        super().do_GET()


def test_credentials_come_from_netrc_as_the_installers_read_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PrivateIndex)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        monkeypatch.setenv("NETRC", str(tmp_path / "missing"))
        with pytest.raises(IndexUnreachable, match="answered 401"):
            list_releases(Source(url), LINUX)
        netrc_file = tmp_path / "netrc"
        netrc_file.write_text("machine 127.0.0.1 login reader password t0ken\n")
        netrc_file.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc_file))
        assert [str(v) for v in list_releases(Source(url), LINUX).versions] == [
            "0.26.1", "0.29.0", "0.29.2",
        ]  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_offline_is_one_clear_line() -> None:
    with pytest.raises(
        IndexUnreachable,
        match=r"cannot reach the package index http://127\.0\.0\.1:9/simple .*offline",
    ):
        list_releases(Source("http://127.0.0.1:9/simple"), LINUX)


def test_index_settings_from_the_environment() -> None:
    assert Source.from_options(environ={}).index_url == DEFAULT_INDEX
    env = {
        "PIP_INDEX_URL": "https://pip.example/simple",
        "UV_INDEX_URL": "https://uv.example/simple/",
    }
    assert Source.from_options(environ=env).index_url == "https://uv.example/simple"
    assert Source.from_options(
        environ={**env, "UV_DEFAULT_INDEX": "https://d.example/simple"}
    ).index_url == ("https://d.example/simple")
    assert (
        Source.from_options("https://mine.example/simple", environ=env).index_url
        == "https://mine.example/simple"
    )


def test_find_links_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="no such directory"):
        Source.from_options(find_links=tmp_path / "missing", environ={})
    with pytest.raises(ReleaseError, match="--find-links"):
        Source.from_options(no_index=True, environ={})
    source = Source.from_options(find_links=tmp_path, no_index=True, environ={})
    assert source.installer_args() == ["--no-index", "--find-links", str(tmp_path.resolve())]
    assert source.cli_args() == ["--no-index", "--find-links", str(tmp_path.resolve())]


@pytest.mark.parametrize(
    "url", ["ftp://example.com/simple", "example.com/simple", "--index-url=x", "javascript:x"]
)
def test_index_urls_must_be_http_or_file(url: str) -> None:
    with pytest.raises(ReleaseError, match="must start with"):
        check_index_url(url)


def test_passwords_never_shown() -> None:
    assert redact("https://user:s3cret@example.com/simple") == "https://user:***@example.com/simple"
    assert "s3cret" not in Source("https://user:s3cret@example.com/simple").describe()


@pytest.mark.parametrize(
    "text", ["-rf", "--pre", "0.29 .1", "0.29/1", "..\\0.29", "latest", "", "0.29.1\n"]
)
def test_versions_are_refused_unless_plain_pep440(text: str) -> None:
    with pytest.raises(ReleaseError):
        parse_version(text)


def test_versions_and_ranges_parse() -> None:
    assert parse_version("0.29.1") == Version("0.29.1")
    assert parse_version("0.30.0.dev20250101+g1234abcd") == Version("0.30.0.dev20250101+g1234abcd")
    assert Version("0.29.3") in parse_range(">=0.29,<0.30")
    with pytest.raises(ReleaseError):
        parse_range("0.29..0.30")


def test_a_file_index_is_read_like_a_served_one(tmp_path: Path) -> None:
    for project, data in PAGES.items():
        (tmp_path / project).mkdir()
        anchors = "".join(f'<a href="{f["filename"]}">{f["filename"]}</a>' for f in data["files"])
        (tmp_path / project / "index.html").write_text(f"<html><body>{anchors}</body></html>")
    listing = list_releases(Source(tmp_path.as_uri()), LINUX, yanked=True)
    assert [str(v) for v in listing.versions] == ["0.26.1", "0.29.0", "0.29.1", "0.29.2"]
