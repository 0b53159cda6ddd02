"""How the project's HTTP listeners (``hugginggpt serve``, ``hugginggpt mcp --http``) hold their
connections: the listening socket, bound before anything loads; uvicorn's HTTP/1.1 protocol (h11)
with a deadline for each request's headers and one for its body; and a stop that lets the
application answer what waits before the connections are closed, then leaves the process within
its grace period.

uvicorn closes a connection that stays idle between requests (``timeout_keep_alive``), but one that
starts a request and never finishes it stays open forever: enough of them and the process runs out
of file descriptors. Here (``DeadlineProtocol``):

- every request's headers must be complete within ``Deadlines.header_s`` of the connection opening,
  or of the previous answer;
- a request's body must arrive at ``Deadlines.body_bytes_per_s`` on average, after a first
  ``Deadlines.body_s`` seconds that need no bytes at all. Time in which the application is not
  reading (uvicorn paused the socket) does not count against the client.

A connection that misses either is closed; the application sees the client leave
(``ClientDisconnect``). Streamed answers are not bound by them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("hugginggpt.server")

#: Seconds a client has to send a request's headers.
HEADER_TIMEOUT_S = 10.0
#: Seconds a request's body may take before its rate counts, and the least average rate after them.
BODY_TIMEOUT_S = 10.0
BODY_BYTES_PER_S = 16 * 1024
#: How often a body's progress is checked.
_BODY_TICK_S = 0.5


@dataclass(frozen=True)
class Deadlines:
    """What a connection must send in time: the headers within ``header_s``; the body at
    ``body_bytes_per_s`` on average, not counting its first ``body_s`` seconds."""

    header_s: float = HEADER_TIMEOUT_S
    body_s: float = BODY_TIMEOUT_S
    body_bytes_per_s: float = BODY_BYTES_PER_S


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers or body are late."""

    deadlines: Deadlines = Deadlines()

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._header_deadline: Any = None
        self._body_check: Any = None
        self._body_bytes = 0
        self._body_clock = 0.0  # seconds of the body that count against the client
        self._body_last = 0.0

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        before = self.conn.their_state
        super().data_received(data)
        after = self.conn.their_state
        if before is h11.IDLE and after is not h11.IDLE:  # the headers are in: the request is being served
            self._disarm()
            if after is h11.SEND_BODY:
                self._watch_body()
        elif before is h11.SEND_BODY:
            self._body_bytes += len(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same time for its headers

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_body_watch()
        super().connection_lost(exc)

    # ------------------------------------------------------------ headers

    def _arm(self) -> None:
        self._disarm()
        if self.conn.their_state is h11.IDLE:
            self._header_deadline = self.loop.call_later(self.deadlines.header_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    # ------------------------------------------------------------ body

    def _watch_body(self) -> None:
        self._stop_body_watch()
        self._body_bytes, self._body_clock, self._body_last = 0, 0.0, self.loop.time()
        self._body_check = self.loop.call_later(_BODY_TICK_S, self._check_body)

    def _stop_body_watch(self) -> None:
        if self._body_check is not None:
            self._body_check.cancel()
            self._body_check = None

    def _check_body(self) -> None:
        self._body_check = None
        if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            return  # the body is complete (or the connection going): nothing more to wait for
        now = self.loop.time()
        if not self.flow.read_paused:  # while the application does not read, the client cannot send
            self._body_clock += now - self._body_last
        self._body_last = now
        owed = (self._body_clock - self.deadlines.body_s) * self.deadlines.body_bytes_per_s
        if self._body_bytes < owed:
            log.info("closed a connection whose request body was too slow (%d bytes in %.0f s)",
                     self._body_bytes, self._body_clock)
            self.transport.close()
            return
        self._body_check = self.loop.call_later(_BODY_TICK_S, self._check_body)


def protocol_with(deadlines: Deadlines) -> type[DeadlineProtocol]:
    """``DeadlineProtocol`` with its own deadlines."""
    return type("DeadlineProtocol", (DeadlineProtocol,), {"deadlines": deadlines})


def uvicorn_config(app: Any, *, host: str, port: int, deadlines: Deadlines = Deadlines(),
                   **options: Any) -> uvicorn.Config:
    """uvicorn's settings for ``app``: the h11 protocol with ``deadlines``, and ``options``."""
    return uvicorn.Config(app, host=host, port=port, http=protocol_with(deadlines), **options)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (as uvicorn binds one; an IPv6 address with or without its
    brackets); ``OSError`` when it cannot be."""
    host = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


# ---------------------------------------------------------------------------------------- stopping


class Listener(uvicorn.Server):
    """uvicorn's server that, told to stop (SIGINT, SIGTERM), first awaits ``on_stop`` (the application
    answers what waits and ends its work), then stops as uvicorn does: no new connections, open ones
    closed once their answer is sent, at most ``timeout_graceful_shutdown`` seconds for them."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], Awaitable[None]] | None = None):
        super().__init__(config)
        self.on_stop = on_stop
        self.stopping_since: float | None = None  # time.monotonic() when it was told to stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.stopping_since = time.monotonic()
        if self.on_stop is not None:
            try:
                await asyncio.wait_for(self.on_stop(), self.config.timeout_graceful_shutdown)
            except Exception as exc:  # noqa: BLE001 - stopping goes on whatever the application did
                log.warning("stopping: %s: %s", type(exc).__name__, exc)
        await super().shutdown(sockets)


class _CountingExecutor(ThreadPoolExecutor):
    """The event loop's default executor (``asyncio.to_thread``), counting the calls still running."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self.running = 0
        self._count = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        def counted() -> Any:
            with self._count:
                self.running += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._count:
                    self.running -= 1

        return super().submit(counted)


def serve(server: Listener, sockets: list[socket.socket], grace_s: float) -> None:
    """Run ``server`` on ``sockets`` until it is told to stop, then leave within ``grace_s`` seconds of
    being told.

    As ``uvicorn.Server.run``, except at the end: ``asyncio.run`` waits for every call still running
    in a worker thread (a model that cannot be interrupted: minutes). Here they get what is left of
    ``grace_s``; past it, the process exits at once (``os._exit``, streams flushed), leaving them
    unfinished: their runs were cancelled and recorded already.
    """
    factory = server.config.get_loop_factory()
    loop = factory() if factory is not None else asyncio.new_event_loop()
    executor = _CountingExecutor()
    loop.set_default_executor(executor)
    interrupted = False
    try:
        loop.run_until_complete(server.serve(sockets=sockets))
    except KeyboardInterrupt:  # uvicorn raises the signal it captured again once it has stopped
        interrupted = True
    stopped = server.stopping_since or time.monotonic()
    with contextlib.suppress(Exception):
        loop.run_until_complete(loop.shutdown_asyncgens())
    executor.shutdown(wait=False, cancel_futures=True)
    while executor.running and time.monotonic() - stopped < grace_s:
        time.sleep(0.05)
    if executor.running:
        log.warning("stopping: %d call(s) still running in worker threads are left unfinished", executor.running)
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130 if interrupted else 0)
    loop.close()
    if interrupted:
        raise KeyboardInterrupt
