"""Issue 23 item 7 (tools side): a ``table`` argument keeps only table content.

A table fetched over http(s) that served HTML or SVG was kept under its served type (``.html``,
``.svg``) in the run's folder, which the server then sent back inline with that type: stored XSS on a
server without a key. Now a table must be CSV text; anything else is refused and removed.
"""

from __future__ import annotations

import contextlib
from typing import ClassVar

import pytest

from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.resources.tables import read_table
from tests.http_servers import RouteHandler, serve

PAGE = b"<!doctype html><script>fetch('/runs').then(r => r.text()).then(alert)</script>"
SVG = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'


def _route(body: bytes, content_type: str):
    def answer(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return answer


class Tables(RouteHandler):
    hits: ClassVar[list[str]] = []
    routes: ClassVar[dict] = {
        "/page.csv": _route(PAGE, "text/html"),
        "/image.csv": _route(SVG, "image/svg+xml"),
        "/sneaky": _route(b"  \n<html><body onload=alert(1)>", "text/csv"),
        "/binary.csv": _route(b"a,b\x00\x01\x02", "text/csv"),
        "/rows": _route(b"a,b\n1,2\n", "text/csv"),
    }

    def record(self) -> None:
        self.hits.append(self.path)


@pytest.fixture
def tables_url():
    with contextlib.contextmanager(serve)(Tables) as url:
        yield url


@pytest.mark.parametrize("path", ["/page.csv", "/image.csv", "/sneaky", "/binary.csv"])
def test_a_downloaded_table_that_is_markup_or_binary_is_refused_and_removed(tmp_path, tables_url, path):
    ws = Workspace(tmp_path / "run", allow_private_urls=True)
    with pytest.raises(ResourceError, match="not a table"):
        read_table(tables_url + path, ws, "tabular-classification")
    assert not any(ws.root.rglob("*.*"))  # nothing of it is kept to be served later


def test_a_downloaded_csv_is_still_a_table(tmp_path, tables_url):
    ws = Workspace(tmp_path / "run", allow_private_urls=True)
    assert read_table(tables_url + "/rows", ws) == {"a": ["1"], "b": ["2"]}


def test_a_local_html_file_is_no_table_whatever_its_name(tmp_path):
    ws = Workspace(tmp_path / "run")
    (ws.root / "t.csv").write_bytes(PAGE)
    (ws.root / "t.svg").write_bytes(b"a,b\n1,2\n")
    for name in ("t.csv", "t.svg"):
        with pytest.raises(ResourceError, match="not a table"):
            read_table(name, ws)
