"""How an MCP server is reached: stdio, or streamable HTTP (held by the project's one HTTP listener,
``hugginggpt.server.connections``: a socket bound before anything loads, header and body deadlines, a stop
within its grace period)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from hugginggpt.mcp.protocol import HuggingGPTMCP


async def serve_stdio(app: HuggingGPTMCP) -> None:
    """Serve on stdin/stdout. Everything else written to stdout (a library's print, llama.cpp's C
    output) goes to stderr instead, so the protocol stream stays clean."""
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    stdout = anyio.wrap_file(io.TextIOWrapper(protocol_out, encoding="utf-8", write_through=True))
    server = app.server()
    async with stdio_server(stdout=stdout) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def local_host(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def http_app(app: HuggingGPTMCP, *, host: str = "127.0.0.1", path: str = "/mcp",
             allowed_hosts: Sequence[str] = ()) -> Any:
    """A Starlette application serving the MCP streamable HTTP transport at ``path``. Requests whose
    Host (or Origin) is not this machine's (or one of ``allowed_hosts``) are refused (DNS rebinding)."""
    import contextlib

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *(f"{h}:*" for h in allowed_hosts)]
    if not local_host(host):
        hosts.append(f"{host}:*")
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts])
    manager = StreamableHTTPSessionManager(app=app.server(), security_settings=security)

    class Endpoint:  # an ASGI app as the route's endpoint (an instance: Starlette passes scope, receive, send)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any):
        async with manager.run():
            yield

    return Starlette(routes=[Route(path, endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])], lifespan=lifespan)
