"""Requests from this machine's own pages only: the guard that holds "this machine only" against the
user's own browser, with or without an API key.

A page on any site the user visits can make the browser send requests to 127.0.0.1 (forms, ``fetch``
with ``text/plain`` bodies, images), and a site whose DNS name is re-pointed at 127.0.0.1 (DNS
rebinding) can even read the answers. So every request is checked before any route sees it:

- the ``Host`` it was sent to must be a local name (``localhost``, ``*.localhost``, ``127.x.x.x``,
  ``[::1]``), the address the server listens on, or one of ``allowed_hosts``; a server listening on
  all addresses without ``allowed_hosts`` takes any ``Host`` (its clients reach it by other names);
- a browser request from another origin is refused (403): an ``Origin`` that is neither this
  server's own nor one of ``cors_origins``, or ``Sec-Fetch-Site: cross-site`` / ``same-site``
  without such an ``Origin``. The page and its static files stay reachable by a plain link.

JSON bodies must say ``Content-Type: application/json`` (``sse.read_json``), so no HTML form or
``text/plain`` "simple request" carries one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.datastructures import Headers

from hugginggpt.server.errors import error_response
from hugginggpt.server.headers import is_page
from hugginggpt.server.settings import ServerSettings

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

#: ``Sec-Fetch-Site`` values of a request this server's own page, or the user, made.
OWN_SITES = frozenset({"same-origin", "none"})
ANY_INTERFACE = frozenset({"0.0.0.0", "::", ""})


def host_name(host: str) -> str:
    """The name in a ``Host`` header value (``name:port``, ``[v6]:port``), lower-cased, no trailing dot."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1:host.find("]")] if "]" in host else host[1:]
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.rstrip(".")


def is_local_name(name: str) -> bool:
    """``localhost``, a name under ``.localhost``, or a loopback address."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class SameOriginGuard:
    """ASGI middleware: refuses requests to foreign ``Host`` names (400) and from other sites (403)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings):
        self.app = app
        self.allowed_hosts = {host_name(h) for h in settings.allowed_hosts}
        bound = host_name(settings.host)
        self.any_host = bound in ANY_INTERFACE and not self.allowed_hosts
        if bound not in ANY_INTERFACE:
            self.allowed_hosts.add(bound)
        self.cors_origins = {origin.rstrip("/").lower() for origin in settings.cors_origins}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        refusal = None
        if not self.host_allowed(host):
            refusal = (400, f"this server does not answer to the host name {host_name(host)!r} (a local name, "
                            "or one given with --allow-host)", "host_not_allowed")
        else:
            reason = self.cross_site(scope, headers, host)
            if reason:
                refusal = (403, f"cross-site request refused: {reason}", "cross_site_request")
        if refusal is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await error_response(*refusal)(scope, receive, send)

    def host_allowed(self, host: str) -> bool:
        if self.any_host or not host:
            return True
        name = host_name(host)
        return is_local_name(name) or name in self.allowed_hosts

    def cross_site(self, scope: Scope, headers: Headers, host: str) -> str | None:
        """Why the request comes from another site, or None when it does not."""
        origin = headers.get("origin")
        if origin is not None:
            origin = origin.rstrip("/").lower()
            own = {f"http://{host.lower()}", f"https://{host.lower()}"}
            if origin in own or origin in self.cors_origins:
                return None
            return f"Origin {origin!r} is not this server's (allow a UI's origin with --cors-origin)"
        site = headers.get("sec-fetch-site")
        if site is None or site in OWN_SITES:
            return None
        if scope.get("method") in ("GET", "HEAD") and is_page(scope["path"]):
            return None  # a link to the chat page from elsewhere (no side effects, nothing to read)
        return f"Sec-Fetch-Site {site!r}"
