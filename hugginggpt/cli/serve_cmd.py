"""`hugginggpt serve`: the web chat page, JARVIS's endpoints, an OpenAI-compatible API and the runs API
in one process (see README "Server"); models load once and every request shares them."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import math
import sys
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from hugginggpt.cli.run_cmd import add_agent_arguments, settings_from
from hugginggpt.config import check_folder, var
from hugginggpt.errors import HuggingGPTError
from hugginggpt.server.settings import MiB, ServerSettings


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("serve", help="serve the chat page and HTTP APIs", description=__doc__.splitlines()[0],
                                   **help_options("serve"))
    parser.add_argument("--host", default=DEFAULTS["host"],
                        help=f"address to listen on (default {DEFAULTS['host']}: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULTS["port"], help=f"port (default {DEFAULTS['port']})")
    parser.add_argument("--api-key", metavar="KEY",
                        help=f"require 'Authorization: Bearer KEY' on every API route (default: ${var('api_key')})")
    parser.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                        help="allow browser calls from this origin (repeatable; default: no CORS)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="answer requests sent to this host name too (repeatable; default: local names only, "
                             "unless --host listens on all addresses)")
    parser.add_argument("--runs-dir", metavar="DIR",
                        help=f"folder of the runs' folders (default: <--trace-dir or ${var('home')}>/server)")
    parser.add_argument("--max-active", type=int, default=DEFAULTS["max_active"], metavar="N",
                        help=f"runs executing at once (default {DEFAULTS['max_active']})")
    parser.add_argument("--max-queued", type=int, default=DEFAULTS["max_queued"], metavar="N",
                        help=f"runs waiting their turn before new requests get 429 (default {DEFAULTS['max_queued']})")
    parser.add_argument("--timeout", type=float, default=DEFAULTS["request_timeout"], metavar="S",
                        help=f"time limit of one run (default {DEFAULTS['request_timeout']:g} s)")
    parser.add_argument("--keep-runs", type=float, default=DEFAULTS["keep_runs_s"], metavar="S",
                        help=f"keep finished runs and their files this long (default {DEFAULTS['keep_runs_s']:g} s)")
    parser.add_argument("--max-upload-mb", type=float, default=DEFAULTS["max_upload_bytes"] / MiB, metavar="MB",
                        help=f"size limit of one upload (default {DEFAULTS['max_upload_bytes'] / MiB:g})")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    add_agent_arguments(parser, request_options=False)
    parser.set_defaults(func=command)


#: The flags' defaults: ServerSettings' own (its module loads no web stack).
DEFAULTS = {f.name: f.default for f in fields(ServerSettings) if f.default is not MISSING}

#: The largest upload limit the flag takes (1 TiB): past it the limit is no limit, and 1e308 no integer.
MAX_UPLOAD_MB = 1 << 20

# ServerSettings field -> the flag that sets it, for error messages
FLAGS = {"max_active": "--max-active", "max_queued": "--max-queued", "request_timeout": "--timeout",
         "keep_runs_s": "--keep-runs", "max_upload_bytes": "--max-upload-mb"}


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def server_settings(args: argparse.Namespace, settings: Any) -> Any:
    if not 0 < args.port < 65536:
        raise HuggingGPTError(f"--port must be between 1 and 65535, got {args.port}")
    if not math.isfinite(args.max_upload_mb) or args.max_upload_mb <= 0:
        raise HuggingGPTError(f"--max-upload-mb must be a positive number of MiB, got {args.max_upload_mb}")
    if args.max_upload_mb > MAX_UPLOAD_MB:
        raise HuggingGPTError(f"--max-upload-mb must be at most {MAX_UPLOAD_MB} MiB, got {args.max_upload_mb:g}")
    if args.runs_dir is not None and not args.runs_dir.strip():
        raise HuggingGPTError("--runs-dir is empty: give a folder (or leave the flag out for the default)")
    runs_dir = args.runs_dir or (Path(settings.trace_dir) / "server" if settings.trace_dir else None)
    options: dict[str, Any] = {"runs_dir": Path(runs_dir)} if runs_dir else {}
    try:
        server = ServerSettings(host=args.host, port=args.port, api_key=ServerSettings.key_from_env(args.api_key),
                                max_active=args.max_active, max_queued=args.max_queued,
                                request_timeout=args.timeout, keep_runs_s=args.keep_runs,
                                max_upload_bytes=int(args.max_upload_mb * MiB),
                                cors_origins=tuple(args.cors_origin), allowed_hosts=tuple(args.allow_host),
                                **options)
    except ValueError as exc:  # the message names the setting: say the flag instead
        message = str(exc)
        for setting, flag in FLAGS.items():
            message = message.replace(setting, flag)
        raise HuggingGPTError(message) from None
    check_folder("--runs-dir" if args.runs_dir else "the runs folder", str(server.runs_dir))
    return server


def show_server_log(level: str) -> None:
    """The server's own messages (runs, reading ahead, errors) on stderr at ``--log-level``, in
    uvicorn's format; without a handler, Python shows only warnings."""
    logger = logging.getLogger("hugginggpt")
    if not any(getattr(h, "hugginggpt_serve", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        handler.hugginggpt_serve = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(level.upper())


def command(args: argparse.Namespace) -> int:
    try:
        from hugginggpt.server import create_app
        from hugginggpt.server.agents import pool_from_settings
        from hugginggpt.server.app import stop
        from hugginggpt.server.connections import Deadlines, Listener, listening_socket, serve, uvicorn_config
    except ImportError as exc:
        raise HuggingGPTError(f"the server needs the 'server' extra: pip install 'hugginggpt[server]' "
                              f"({exc.name} is missing)") from None
    settings = settings_from(args)
    server = server_settings(args, settings)
    if not _loopback(server.host) and not server.api_key:
        print(f"hugginggpt: warning: listening on {server.host} without --api-key: anyone who can reach "
              "this port can run requests", file=sys.stderr)
    try:  # before anything loads: a port in use is one line at once, not a model load later
        sock = listening_socket(server.host, server.port)
    except OSError as exc:
        raise HuggingGPTError(f"cannot listen on {server.host}:{server.port}: {exc.strerror or exc}") from None
    with sock:
        agents = pool_from_settings(settings)
        agents.get(settings.agent)  # load the controller and tools now: a bad --llm stops here with one line
        app = create_app(server, agents)
        print(f"hugginggpt: serving on http://{server.host}:{server.port}/ (agent {settings.agent}, "
              f"runs in {server.runs_dir})", file=sys.stderr, flush=True)
        show_server_log(args.log_level)
        deadlines = Deadlines(server.header_timeout_s, server.body_timeout_s, server.min_body_bytes_per_s)
        config = uvicorn_config(app, host=server.host, port=server.port, deadlines=deadlines,
                                log_level=args.log_level, timeout_graceful_shutdown=server.stop_grace_s / 2)
        uvicorn_server = Listener(config, on_stop=lambda: stop(app))
        try:
            serve(uvicorn_server, [sock], server.stop_grace_s)
        except SystemExit:  # uvicorn's own exit when its start-up failed; said in its log
            pass
    if not uvicorn_server.started:
        raise HuggingGPTError(f"the server on {server.host}:{server.port} did not start (see the log above)")
    return 0
