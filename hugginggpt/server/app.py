"""The FastAPI application: one process, one registry of runs, the agents built once and shared."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from hugginggpt.server import routes_jarvis, routes_openai, routes_page, routes_runs
from hugginggpt.server.agents import AgentPool, read_prompts_ahead
from hugginggpt.server.auth import require_key
from hugginggpt.server.bodies import add_components
from hugginggpt.server.errors import install_error_handlers
from hugginggpt.server.headers import SecurityHeaders
from hugginggpt.server.routes_page import STATIC
from hugginggpt.server.runs import RunRegistry
from hugginggpt.server.same_origin import SameOriginGuard
from hugginggpt.server.settings import ServerSettings
from hugginggpt.server.wire import WireJSONResponse

log = logging.getLogger("hugginggpt.server")


def create_app(settings: ServerSettings, agents: AgentPool, *, warm_default: bool = True) -> FastAPI:
    """The server for ``agents`` under ``settings``; ``warm_default`` builds the default agent (and so
    loads the controller LLM) at startup, so the first request does not pay for it and a bad model
    spec stops the server at once, then has the controller read the planning prompt in the background
    (``read_prompts_ahead``)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.runs_dir.mkdir(parents=True, exist_ok=True)
        registry = RunRegistry(settings, agents)
        app.state.registry = registry
        if warm_default:
            agent = await asyncio.to_thread(agents.get, agents.default)
            # in the background: the server answers at once; a request that comes first waits for the
            # controller (one at a time), then reads only its own words
            # (kept on app.state: the event loop holds only a weak reference to a task)
            app.state.reading_ahead = asyncio.create_task(asyncio.to_thread(read_prompts_ahead, agent))
        registry.start_reaper()
        try:
            yield
        finally:
            await registry.close()

    app = FastAPI(title="hugginggpt", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None,
                  default_response_class=WireJSONResponse)
    app.state.settings = settings
    install_error_handlers(app)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["*"],
                           allow_headers=["*"])
    app.add_middleware(SecurityHeaders)
    app.add_middleware(SameOriginGuard, settings=settings)  # added last: the outermost, before CORS
    guarded = [Depends(require_key)]
    app.include_router(routes_runs.router, dependencies=guarded)
    app.include_router(routes_jarvis.router, dependencies=guarded)
    app.include_router(routes_openai.router, dependencies=guarded)
    app.include_router(routes_page.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    plain_openapi = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = add_components(plain_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # the request bodies' models in the components
    return app


async def stop(app: FastAPI) -> None:
    """The server is told to stop: its runs are cancelled and recorded, and what waits on them answered
    (503) before the connections close (``connections.Listener``'s ``on_stop``)."""
    registry = getattr(getattr(app, "state", None), "registry", None)
    if registry is not None:
        await registry.stop()
