"""Local HTTP servers on 127.0.0.1 for tests: a handler that dispatches GETs to routes, a context that
serves it on a free port, and a base for stand-in servers used as ``with Server() as server:``. Each test
module brings its own routes and records its own hits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class RouteHandler(BaseHTTPRequestHandler):
    """Answers a GET with the route for its path (the query is ignored), 404 when there is none.

    Subclasses set ``routes`` and ``hits`` and say in ``record`` what a request leaves in ``hits``, so a
    test can prove a server was (or was never) reached.
    """

    routes: ClassVar[dict[str, Callable[[Any], None]]] = {}
    hits: ClassVar[list[Any]]

    def record(self) -> None:
        raise NotImplementedError

    def do_GET(self) -> None:
        self.record()
        route = self.routes.get(self.path.split("?", 1)[0])
        if route is None:
            self.send_error(404)
            return
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up on purpose (a limit or a timeout was hit)

    def log_message(self, *args: Any) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port; yields the base URL, shuts down when resumed."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class LocalServer:
    """A threaded server on a free loopback port for the handler class ``make_handler(self)`` builds;
    ``with server:`` runs it, ``url`` is ``http://127.0.0.1:PORT`` + ``base_path``."""

    base_path = ""

    def __init__(self, make_handler: Callable[[Any], type[BaseHTTPRequestHandler]]):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.base_path}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
