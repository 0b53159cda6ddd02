"""The web chat page (static files, no build step) and /health; both open without the API key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

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
