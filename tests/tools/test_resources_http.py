"""URL downloads against a real HTTP server on 127.0.0.1: limits, timeouts, redirects, naming, and the
private-address guard (the server is on loopback, so every test that downloads opts in explicitly)."""

from __future__ import annotations

import io
import ipaddress
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources import (
    ALLOW_PRIVATE_ENV,
    Workspace,
    allow_any,
    download,
    format_size,
    load_audio,
    load_image,
    public_only,
)
from hugginggpt.tools.resources.netguard import checked_addresses
from tests.http_servers import RouteHandler, serve


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (7, 5), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def _wav() -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.linspace(-0.5, 0.5, 800, dtype=np.float32), 8000, format="WAV")
    return buf.getvalue()


PNG, WAV = _png(), _wav()


class Handler(RouteHandler):
    """Routes of the test server; each one is a situation a download must handle."""

    hits: ClassVar[list[str]] = []  # every request any test server received, so a test can prove none was made

    def record(self) -> None:
        self.hits.append(f"{self.server.server_address[1]}{self.path}")

    def body(self, data: bytes, content_type: str, *, length: bool = True) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _stream_forever(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.end_headers()  # no Content-Length: HTTP/1.0, the body ends when the connection closes
    for _ in range(1000):
        h.wfile.write(b"\0" * 1024)


def _trickle(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.end_headers()
    for _ in range(40):
        h.wfile.write(b"x")
        h.wfile.flush()
        time.sleep(0.1)


Handler.routes = {
    "/cat.png": lambda h: h.body(PNG, "image/png"),
    "/photo": lambda h: h.body(PNG, "application/octet-stream"),  # name from magic bytes
    "/speech": lambda h: h.body(WAV, "audio/x-wav; charset=binary", length=False),
    "/notes.csv": lambda h: h.body(b"a,b\n1,2\n", "text/csv"),
    "/fake.png": lambda h: h.body(b"<html>not an image</html>", "image/png"),
    "/big-declared": lambda h: h.body(b"\0" * 10000, "image/png"),
    "/big-streamed": _stream_forever,
    "/sleep": lambda h: (time.sleep(3), h.body(PNG, "image/png")),
    "/trickle": _trickle,
    "/to-cat": lambda h: h.redirect("/cat.png"),
    "/to-file": lambda h: h.redirect("file:///etc/passwd"),
    "/to-ftp": lambda h: h.redirect("ftp://127.0.0.1/cat.png"),
    "/loop": lambda h: h.redirect("/loop"),
    "/goto": lambda h: h.redirect(parse_qs(urlsplit(h.path).query)["to"][0]),  # an open redirect
}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    yield from serve(Handler)


@pytest.fixture(scope="module")
def internal() -> Iterator[str]:
    """A second local server: the "internal service" a hostile redirect aims at."""
    yield from serve(Handler)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """Tight limits, so the failure tests finish fast; the server is local, so private URLs are allowed."""
    return Workspace(tmp_path / "run", max_download_bytes=4096, download_timeout=0.5, allow_private_urls=True)


@pytest.fixture
def roomy_ws(tmp_path: Path) -> Workspace:
    """For downloads that must succeed: a timeout a loaded CI machine cannot miss."""
    return Workspace(tmp_path / "run", max_download_bytes=4096, download_timeout=10, allow_private_urls=True)


def _downloads(ws: Workspace) -> list[Path]:
    """Every file left in the download folder, temporary files included."""
    folder = ws.root / "inputs"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_downloads_a_png_into_the_workspace(roomy_ws: Workspace, server: str):
    ws = roomy_ws
    path = ws.resolve(f"{server}/cat.png", "image")
    assert path.parent == ws.root / "inputs" and path.suffix == ".png"
    assert path.read_bytes() == PNG
    assert load_image(path).getpixel((0, 0)) == (200, 10, 10)


def test_names_come_from_content_not_from_the_url(roomy_ws: Workspace, server: str):
    ws = roomy_ws
    photo = ws.resolve(f"{server}/photo?name=../../evil.sh", "image")
    assert photo.suffix == ".png" and photo.parent == ws.root / "inputs"
    speech = ws.resolve(f"{server}/speech", "audio")
    assert speech.suffix == ".wav"
    data, rate = load_audio(speech)
    assert rate == 8000 and len(data) == 800
    table = ws.resolve(f"{server}/notes.csv", "table")
    assert table.suffix == ".csv" and table.read_text() == "a,b\n1,2\n"
    assert len(_downloads(ws)) == 3


def test_follows_http_redirects(roomy_ws: Workspace, server: str):
    ws = roomy_ws
    assert ws.resolve(f"{server}/to-cat", "image").read_bytes() == PNG


# (id, route, cause): every failure must raise ResourceError and leave no file behind
FAILURES = [
    ("oversized-by-content-length", "/big-declared", "download exceeds 4 KiB limit"),
    ("oversized-while-streaming", "/big-streamed", "download exceeds 4 KiB limit"),
    ("server-sleeps", "/sleep", "download timed out after 0.5 s"),
    ("server-trickles", "/trickle", "download timed out after 0.5 s"),
    ("redirect-to-file", "/to-file", "redirect to a non-http(s) URL is not allowed"),
    ("redirect-to-ftp", "/to-ftp", "redirect to a non-http(s) URL is not allowed"),
    ("redirect-loop", "/loop", "too many redirects (more than 5)"),
    ("not-found", "/missing", "download failed: HTTP 404"),
    ("not-an-image", "/fake.png", "not an image"),
]


@pytest.mark.parametrize("route, cause", [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_download_failures_leave_nothing(ws: Workspace, server: str, route: str, cause: str):
    started = time.monotonic()
    with pytest.raises(ResourceError) as info:
        ws.resolve(f"{server}{route}", "image")
    assert cause in str(info.value)
    assert time.monotonic() - started < 2.5  # the limit, not the server, decides when we stop
    assert _downloads(ws) == []


def test_unreachable_host_is_a_resource_error(tmp_path: Path):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ResourceError, match="download failed"):
        download(f"http://127.0.0.1:{port}/x.png", tmp_path, max_bytes=100, timeout=1, address_policy=allow_any)
    assert list(tmp_path.iterdir()) == []


def test_download_function_reports_its_limit(tmp_path: Path, server: str):
    with pytest.raises(ResourceError, match="download exceeds 512 bytes limit"):
        download(f"{server}/big-declared", tmp_path, max_bytes=512, timeout=1, address_policy=allow_any)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("n_bytes, text", [(50 << 20, "50 MiB"), (1536, "1.5 KiB"), (2 << 30, "2 GiB"), (10, "10 bytes")])
def test_limits_read_as_people_write_them(n_bytes: int, text: str):
    assert format_size(n_bytes) == text


# ------------------------------------------------------------------ private network addresses (SSRF)

# (address, why public_only refuses it; None: allowed)
ADDRESSES = [
    ("8.8.8.8", None),
    ("2606:4700:4700::1111", None),
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("::1", "loopback"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fd00::1", "private"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("100.100.100.200", "not globally routable"),  # carrier-grade NAT; a cloud metadata address
    ("::ffff:127.0.0.1", "loopback, as 127.0.0.1"),  # IPv4-mapped
    ("::ffff:8.8.8.8", None),
    ("2002:a9fe:a9fe::1", "link-local, as 169.254.169.254"),  # 6to4
    ("64:ff9b::a00:1", "private, as 10.0.0.1"),  # NAT64
]


@pytest.mark.parametrize("address, reason", ADDRESSES, ids=[a for a, _ in ADDRESSES])
def test_public_only_refuses_non_public_addresses(address: str, reason: str | None):
    assert public_only(ipaddress.ip_address(address), 443) == reason


def test_default_workspace_refuses_a_loopback_url_without_connecting(tmp_path: Path, server: str, monkeypatch):
    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    before = len(Handler.hits)
    with pytest.raises(ResourceError) as info:
        Workspace(tmp_path / "run").resolve(f"{server}/cat.png", "image")
    assert str(info.value) == ("refusing to download from a private network address: 127.0.0.1 (loopback) "
                               "(set HUGGINGGPT_ALLOW_PRIVATE_URLS=1 to allow)")
    assert len(Handler.hits) == before  # refused before a connection was made
    assert not (tmp_path / "run" / "inputs").exists() or _downloads(Workspace(tmp_path / "run")) == []


@pytest.mark.parametrize("value, allowed", [("1", True), ("true", True), ("TRUE", True), ("0", False),
                                            ("false", False), ("", False)])
def test_the_environment_variable_switches_the_guard(tmp_path: Path, server: str, monkeypatch, value: str,
                                                     allowed: bool):
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, value)
    ws = Workspace(tmp_path / "run")
    if allowed:
        assert ws.resolve(f"{server}/cat.png", "image").read_bytes() == PNG
    else:
        with pytest.raises(ResourceError, match="private network address"):
            ws.resolve(f"{server}/cat.png", "image")


def test_an_explicit_argument_wins_over_the_environment(tmp_path: Path, server: str, monkeypatch):
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
    with pytest.raises(ResourceError, match="private network address"):
        Workspace(tmp_path / "a", allow_private_urls=False).resolve(f"{server}/cat.png", "image")
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "0")
    assert Workspace(tmp_path / "b", allow_private_urls=True).resolve(f"{server}/cat.png", "image").exists()


def _port(url: str) -> int:
    return urlsplit(url).port or 80


def test_a_redirect_hop_to_a_private_address_is_refused(tmp_path: Path, server: str, internal: str):
    """The first server is trusted by port; its redirect to another local service is checked and refused."""
    trusted = _port(server)

    def only_the_first_server(address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> str | None:
        return None if port == trusted and address.is_loopback else public_only(address, port)

    ws = Workspace(tmp_path / "run", address_policy=only_the_first_server, download_timeout=2)
    assert ws.resolve(f"{server}/to-cat", "image").read_bytes() == PNG  # same-server redirect: allowed
    before = list(Handler.hits)
    for target in (f"{internal}/cat.png", f"http://localhost:{_port(internal)}/cat.png",
                   "http://169.254.169.254/latest/meta-data/"):
        with pytest.raises(ResourceError, match="refusing to download from a private network address"):
            ws.resolve(f"{server}/goto?to={target}", "image")
    new_hits = Handler.hits[len(before):]
    assert new_hits and all(hit.startswith(f"{trusted}/goto") for hit in new_hits)  # internal never reached
    assert [p.suffix for p in _downloads(ws)] == [".png"]
    # the control: with private URLs allowed, the very same redirect reaches the internal server
    open_ws = Workspace(tmp_path / "open", allow_private_urls=True)
    assert open_ws.resolve(f"{server}/goto?to={internal}/cat.png", "image").read_bytes() == PNG


# Spellings of 127.0.0.1 (and friends) that a naive string check misses; the resolver normalises them.
ODD_SPELLINGS = ["http://2130706433:{port}/cat.png", "http://0x7f.1:{port}/cat.png", "http://0x7f000001:{port}/cat.png",
                 "http://127.1:{port}/cat.png", "http://localhost:{port}/cat.png", "http://LocalHost:{port}/cat.png",
                 "http://[::ffff:127.0.0.1]:{port}/cat.png", "http://[::1]:{port}/cat.png", "http://0:{port}/cat.png",
                 "http://0177.0.0.1:{port}/cat.png"]


@pytest.mark.parametrize("template", ODD_SPELLINGS)
def test_odd_spellings_of_local_addresses_are_refused(tmp_path: Path, server: str, monkeypatch, template: str):
    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    before = len(Handler.hits)
    with pytest.raises(ResourceError, match="private network address|invalid URL"):
        Workspace(tmp_path / "run").resolve(template.format(port=_port(server)), "image")
    assert len(Handler.hits) == before


def test_every_resolved_address_must_pass(monkeypatch):
    """A name resolving to a public AND a private address is refused, whichever would be tried first."""
    answers = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 80)),
               (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 80))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: answers)
    with pytest.raises(ResourceError, match="example.test resolves to 10.0.0.7 \\(private\\)"):
        checked_addresses("example.test", 80, public_only)
    assert checked_addresses("example.test", 80, allow_any) == ["93.184.215.14", "10.0.0.7"]
