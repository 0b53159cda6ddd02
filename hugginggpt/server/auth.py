"""Bearer-key auth: with a key set, every API route needs ``Authorization: Bearer KEY`` (401 otherwise).

/health and the page's static files stay open, so a load balancer can probe and a browser can load
the page, which then asks for the key itself.
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
    if scheme.lower() != "bearer" or not secrets.compare_digest(token.strip().encode(), key.encode()):
        raise ApiError(401, "missing or wrong API key: send the header 'Authorization: Bearer KEY'",
                       code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
