"""The web chat page (static files, no build step), /health, and the API reference.

The page, its files and /health are open without the API key; so is /docs, a page of this server's
own (no CDN: it works offline under the page's Content-Security-Policy) that renders /openapi.json,
which is behind the key when one is set (the page asks for it, as the chat page does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse

from hugginggpt.server.auth import require_key

STATIC = Path(__file__).parent / "static"

router = APIRouter()


@router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html")


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    runs = request.app.state.registry
    return {"status": "ok", "agents": list(runs.agents.names), "default_agent": runs.agents.default,
            "auth": bool(request.app.state.settings.api_key), "unfinished_runs": runs.unfinished()}


@router.get("/docs", include_in_schema=False)
async def docs() -> FileResponse:
    return FileResponse(STATIC / "docs.html", media_type="text/html")


@router.get("/openapi.json", include_in_schema=False, dependencies=[Depends(require_key)])
async def openapi(request: Request) -> dict[str, Any]:
    return request.app.openapi()
