"""Every error the server answers is JSON: ``{"error": {"message", "type", "code"}}`` (OpenAI's shape),
with a status that says whose fault it is; the server keeps serving whatever a request sent."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from hugginggpt.server.wire import WireJSONResponse

log = logging.getLogger("hugginggpt.server")


class ApiError(Exception):
    """An error answered to the client as it is: ``status``, a message naming the cause, extra headers."""

    def __init__(self, status: int, message: str, *, code: str = "invalid_request",
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}


def error_body(message: str, code: str, status: int) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "code": code}}


def error_response(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return WireJSONResponse(error_body(message, code, status), status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.code, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, _validation_message(exc), "invalid_request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, str(exc.detail), code, getattr(exc, "headers", None))

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: ClientDisconnect) -> JSONResponse:
        # the client went away while sending its body (or its body deadline closed the connection):
        # nobody reads this answer, and it is no error of the server's (one debug line, no traceback)
        log.debug("client left during the body of %s %s", request.method, request.url.path)
        return error_response(400, "the client disconnected before its body was complete", "client_disconnected")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error: {type(exc).__name__}", "internal_error")
