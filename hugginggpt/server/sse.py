"""Server-sent events: the wire format, and reading a JSON body with a size limit and a clear error."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from hugginggpt.server.errors import ApiError
from hugginggpt.server.files import CLOSE, declared_length
from hugginggpt.server.wire import wire_text

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
#: A comment line every this many quiet seconds, so proxies do not close a stream while a model plans.
HEARTBEAT_S = 15.0
KEEP_ALIVE = ": keep-alive\n\n"


def sse(data: Any, *, event: str | None = None, id: int | None = None) -> str:
    """One SSE message; ``data`` is JSON-encoded unless it is a string already."""
    text = wire_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str))
    head = (f"id: {id}\n" if id is not None else "") + (f"event: {event}\n" if event else "")
    return head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"


def is_json_type(content_type: str) -> bool:
    """Whether a Content-Type header names JSON (``application/json``, ``application/*+json``)."""
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))


async def read_json(request: Request, max_bytes: int) -> Any:
    """The request's JSON body; 415 unless it is sent as JSON (an HTML form or a ``text/plain`` body is
    what another site can make a browser send), 413 past ``max_bytes``, 400 when it is not JSON
    (saying where)."""
    if not is_json_type(request.headers.get("content-type", "")):
        raise ApiError(415, "send the body as JSON, with the header 'Content-Type: application/json' "
                            "(a run also takes a multipart/form-data form)", code="unsupported_media_type")
    declared = declared_length(request)
    too_large = ApiError(413, f"the body is larger than the limit of {max_bytes} bytes", code="body_too_large",
                         headers=CLOSE)
    if declared is not None and declared > max_bytes:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise too_large
    if not body.strip():
        raise ApiError(400, "empty body: send a JSON object", code="invalid_json")
    try:
        value = json.loads(body)
        # A \\ud800-style escape decodes to a lone surrogate: not text, and no answer echoing it could be encoded.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                       code="invalid_json") from None
    except RecursionError:
        raise ApiError(400, "malformed JSON: nested too deeply", code="invalid_json") from None
    except UnicodeError:
        raise ApiError(400, "malformed JSON: the body is not UTF-8 text (or escapes a lone surrogate such as \\ud800)",
                       code="invalid_json") from None
    return value
