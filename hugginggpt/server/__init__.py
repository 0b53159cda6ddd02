"""`hugginggpt serve`: HuggingGPT over HTTP, in one process whose models all requests share.

- ``app``: the FastAPI application and its wiring (``create_app``)
- ``settings``: the server's own settings (limits, key, CORS, retention)
- ``agents``: the agents the server offers, built once and shared
- ``stages``: the one adapter from an agent to its stage events
- ``runs``: the run registry and lifecycle (admission, events, cancellation, retention)
- ``messages``: chat messages in (JARVIS and OpenAI bodies) to the agent contract's input
- ``files``: uploads in (size and type checks) and run files out (confined to the run's folder)
- ``bodies``: the request bodies as pydantic models (the OpenAPI schema)
- ``connections``: the HTTP listener (of ``mcp --http`` too): bound socket, header and body deadlines, the stop
- ``auth``, ``errors``: bearer keys; 4xx/5xx JSON errors
- ``routes_jarvis``, ``routes_openai``, ``routes_runs``, ``routes_page``: the endpoints
"""

from __future__ import annotations

from typing import Any

__all__ = ["ServerSettings", "create_app"]


def __getattr__(name: str) -> Any:
    """``create_app`` and ``ServerSettings`` load on first use, so the CLI reads the server's settings
    (its flags' defaults) without loading the web stack."""
    if name == "create_app":
        from hugginggpt.server.app import create_app

        return create_app
    if name == "ServerSettings":
        from hugginggpt.server.settings import ServerSettings

        return ServerSettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
