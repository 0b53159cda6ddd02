"""Bearer-key auth: with a key set, every API route needs ``Authorization: Bearer KEY`` (401 otherwise).

/health, the page's static files and the /docs page stay open, so a load balancer can probe and a
browser can load the pages, which then ask for the key themselves (/openapi.json needs it).
"""

from __future__ import annotations

import secrets

from fastapi import Request

from hugginggpt.server.errors import ApiError


def require_key(request: Request) -> None:
    """FastAPI dependency: pass when no key is configured or the request's bearer token matches."""
    key = request.app.state.settings.api_key
    if not key:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    # Header values arrive as bytes decoded as Latin-1: encoded back, they are the bytes the client
    # sent, which for a key with non-ASCII characters are its UTF-8 bytes.
    sent = token.strip().encode("latin-1", "replace")
    if scheme.lower() != "bearer" or not secrets.compare_digest(sent, key.encode("utf-8")):
        raise ApiError(401, "missing or wrong API key: send the header 'Authorization: Bearer KEY'",
                       code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
