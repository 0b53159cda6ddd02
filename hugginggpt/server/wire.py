"""Text as it goes on the wire: UTF-8, whatever a model wrote.

A model's JSON can escape half of a surrogate pair (``"\\ud83d"``); parsed, that is a lone surrogate,
which no UTF-8 encoder accepts, so a response carrying it would fail half-way through a stream. Every
JSON body and SSE message is passed through ``wire_text``: pairs stay characters, a lone half becomes
U+FFFD (the replacement character), as a browser shows bytes it cannot decode.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse


def _replaced(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def wire_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a no-op for ordinary text)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _replaced(text)


def wire_bytes(text: str) -> bytes:
    """``wire_text(text)`` as UTF-8, encoded once when ``text`` has no lone surrogate (the usual case)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _replaced(text).encode("utf-8")


class WireJSONResponse(JSONResponse):
    """FastAPI's JSON response, with model text that holds lone surrogates made encodable."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        return wire_bytes(text)
