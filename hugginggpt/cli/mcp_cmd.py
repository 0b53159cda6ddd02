"""`hugginggpt mcp`: every task tool and the agent as tools of an MCP server (stdio; --http for HTTP).

Its help page ends with examples (``hugginggpt.cli.examples``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hugginggpt.cli.run_cmd import add_agent_arguments, settings_from
from hugginggpt.errors import HuggingGPTError


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("mcp", help="serve the task tools and the agent over MCP",
                                   description=__doc__.split("\n\n")[0], **help_options("mcp"))
    parser.add_argument("--allow", action="append", default=[], metavar="DIR",
                        help="a folder (or file) whose files the tools may read, a relative one from the current "
                             "directory, as are relative paths in calls (repeatable; default: none, only http(s) "
                             "URLs and this server's own outputs)")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="with --http: port (default 8000)")
    parser.add_argument("--path", default="/mcp", help="with --http: the endpoint's path (default /mcp)")
    parser.add_argument("--audio-as", choices=("audio", "resource", "path"), default="audio",
                        help="how produced audio comes back: MCP audio content (default), an embedded resource "
                             "(for clients without audio content, e.g. langchain-mcp-adapters 0.3), or its path only")
    parser.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"],
                        help="with --http: the HTTP server's log level (default warning)")
    add_agent_arguments(parser, request_options=False)
    parser.set_defaults(func=command)


#: Seconds a stopping MCP server gives open requests and calls still running in threads.
GRACE_S = 10.0


def command(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401 - the extra's presence, checked before anything is built

        from hugginggpt.mcp import (
            HuggingGPTMCP,
            http_app,
            local_host,
            serve_stdio,
        )
    except ImportError as exc:
        raise HuggingGPTError(f"the MCP server needs its extra: pip install 'hugginggpt[mcp]' ({exc.name} is missing)") from None
    settings = settings_from(args)
    if args.http and not 0 < args.port < 65536:
        raise HuggingGPTError(f"--port must be between 1 and 65535, got {args.port}")
    if not args.path.startswith("/"):
        raise HuggingGPTError(f"--path must start with '/', got {args.path!r}")
    app = HuggingGPTMCP(settings, allow=args.allow, audio_as=args.audio_as)
    if not args.http:
        import anyio

        anyio.run(serve_stdio, app)
        return 0
    from hugginggpt.server.connections import Listener, listening_socket, serve, uvicorn_config

    if not local_host(args.host):
        print(f"hugginggpt: warning: listening on {args.host}: anyone who can reach this port can run the tools "
              "and read the allowed folders", file=sys.stderr)
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        raise HuggingGPTError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    with sock:
        print(f"hugginggpt: MCP on http://{args.host}:{args.port}{args.path} ({len(app.tools) + 1} tools, "
              f"outputs in {app.root})", file=sys.stderr, flush=True)
        # the header and body deadlines, and the stop, of every HTTP listener the project starts
        config = uvicorn_config(http_app(app, host=args.host, path=args.path), host=args.host, port=args.port,
                                log_level=args.log_level, timeout_graceful_shutdown=GRACE_S / 2)
        serve(Listener(config), [sock], GRACE_S)
    return 0
