"""How the server holds its connections: the listening socket, bound before anything loads, and
uvicorn's HTTP/1.1 protocol (h11) with a deadline for each request's headers.

uvicorn closes a connection that stays idle between requests (``timeout_keep_alive``), but one that
starts a request and never finishes its headers (or never sends a byte) stays open forever: enough of
them and the process runs out of file descriptors. Here every request's headers must be complete
within ``header_timeout_s`` of the connection opening, or of the previous answer; the connection is
closed otherwise. Bodies and streamed answers are not bound by it.
"""

from __future__ import annotations

import socket
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a request's headers.
HEADER_TIMEOUT_S = 10.0


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are not complete in time."""

    header_timeout_s: float = HEADER_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._header_deadline: Any = None

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the request is being served
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same time for its headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if self.conn.their_state is h11.IDLE:
            self._header_deadline = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def protocol_with_deadline(header_timeout_s: float) -> type[HeaderDeadlineProtocol]:
    """``HeaderDeadlineProtocol`` with its own header deadline."""
    return type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout_s": header_timeout_s})


def uvicorn_config(app: Any, *, host: str, port: int, header_timeout_s: float = HEADER_TIMEOUT_S,
                   **options: Any) -> uvicorn.Config:
    """uvicorn's settings for ``app``: the h11 protocol with the header deadline, and ``options``."""
    return uvicorn.Config(app, host=host, port=port, http=protocol_with_deadline(header_timeout_s), **options)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (as uvicorn binds one); ``OSError`` when it cannot be."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock
