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
import re
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


#: A ``Host`` header value (RFC 9110): a name or an IPv4 address, or an IPv6 address in brackets, then
#: at most a port of digits. Anything after the port (``127.0.0.1:8000.evil.example``) is no host.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^\[\]:/@\\\s]+))(?::[0-9]{0,5})?")


def host_name(host: str) -> str | None:
    """The name in a ``Host`` header value (``name:port``, ``[v6]:port``), lower-cased, no trailing dot;
    None when the value is no host (more than a port after the name, a path, user info, spaces)."""
    match = _HOST.fullmatch(host.strip())
    if match is None:
        return None
    return (match.group("v6") or match.group("name")).lower().rstrip(".")


def bound_name(address: str) -> str:
    """The name of an address the server is told to listen on or to answer to (``--host``,
    ``--allow-host``): a ``Host``-style value, or a bare IPv6 address."""
    name = host_name(address)
    return name if name is not None else address.strip().strip("[]").lower().rstrip(".")


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
        self.allowed_hosts = {bound_name(h) for h in settings.allowed_hosts}
        bound = bound_name(settings.host)
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
            name = host_name(host)
            refusal = (400, f"this server does not answer to the host name {name!r} (a local name, or one given "
                            "with --allow-host)" if name is not None else f"malformed Host header {host[:100]!r}",
                       "host_not_allowed")
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
        if not host:
            return True
        name = host_name(host)
        if name is None:  # no host at all, whatever the server listens on
            return False
        return self.any_host or is_local_name(name) or name in self.allowed_hosts

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
