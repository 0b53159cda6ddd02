"""URL downloads against a real HTTP server on 127.0.0.1: limits, timeouts, redirects, naming."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources import Workspace, download, format_size, load_audio, load_image


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (7, 5), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def _wav() -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.linspace(-0.5, 0.5, 800, dtype=np.float32), 8000, format="WAV")
    return buf.getvalue()


PNG, WAV = _png(), _wav()


class Handler(BaseHTTPRequestHandler):
    """Routes of the test server; each one is a situation a download must handle."""

    routes: dict[str, Callable[["Handler"], None]] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        route = self.routes.get(self.path.split("?", 1)[0])
        if route is None:
            self.send_error(404)
            return
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on purpose (limit or timeout)

    def log_message(self, *args) -> None:
        pass

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
}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "run", max_download_bytes=4096, download_timeout=0.5)


def _downloads(ws: Workspace) -> list[Path]:
    """Every file left in the download folder, temporary files included."""
    folder = ws.root / "inputs"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_downloads_a_png_into_the_workspace(ws: Workspace, server: str):
    path = ws.resolve(f"{server}/cat.png", "image")
    assert path.parent == ws.root / "inputs" and path.suffix == ".png"
    assert path.read_bytes() == PNG
    assert load_image(path).getpixel((0, 0)) == (200, 10, 10)


def test_names_come_from_content_not_from_the_url(ws: Workspace, server: str):
    photo = ws.resolve(f"{server}/photo?name=../../evil.sh", "image")
    assert photo.suffix == ".png" and photo.parent == ws.root / "inputs"
    speech = ws.resolve(f"{server}/speech", "audio")
    assert speech.suffix == ".wav"
    data, rate = load_audio(speech)
    assert rate == 8000 and len(data) == 800
    table = ws.resolve(f"{server}/notes.csv", "table")
    assert table.suffix == ".csv" and table.read_text() == "a,b\n1,2\n"
    assert len(_downloads(ws)) == 3


def test_follows_http_redirects(ws: Workspace, server: str):
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
        download(f"http://127.0.0.1:{port}/x.png", tmp_path, max_bytes=100, timeout=1)
    assert list(tmp_path.iterdir()) == []


def test_download_function_reports_its_limit(tmp_path: Path, server: str):
    with pytest.raises(ResourceError, match="download exceeds 512 bytes limit"):
        download(f"{server}/big-declared", tmp_path, max_bytes=512, timeout=1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("n_bytes, text", [(50 << 20, "50 MiB"), (1536, "1.5 KiB"), (2 << 30, "2 GiB"), (10, "10 bytes")])
def test_limits_read_as_people_write_them(n_bytes: int, text: str):
    assert format_size(n_bytes) == text
