"""Headers on every answer that keep a browser from treating what the server sends as something else.

- ``X-Content-Type-Options: nosniff``: a file is only ever what its ``Content-Type`` says;
- ``Content-Security-Policy``: the chat page (and the /docs page) may load only its own files (and show media through
  ``blob:`` URLs); everything else (API answers, run files) is a sandbox with no scripts, so a file a
  model or a download wrote cannot act as a page of this server even when opened directly;
- ``Referrer-Policy: no-referrer``: run URLs (unguessable ids) never leak to other sites.

Run files that are not media are also sent as attachments (``routes_runs.run_file``).
"""

from __future__ import annotations

from typing import Any

PAGE_CSP = ("default-src 'self'; connect-src 'self' blob:; img-src 'self' blob: data:; media-src 'self' blob:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SANDBOX_CSP = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; frame-ancestors 'none'"


def is_page(path: str) -> bool:
    """Whether ``path`` is the chat page, the API reference page, or one of their own static files."""
    return path in ("/", "/docs") or path.startswith("/static/")


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    """The headers added to the answer to a request for ``path`` (the page's policy, or the sandbox)."""
    return [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
            (b"content-security-policy", (PAGE_CSP if is_page(path) else SANDBOX_CSP).encode())]


class SecurityHeaders:
    """ASGI middleware: adds ``security_headers`` to every HTTP answer (a header the app set stays)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = security_headers(scope["path"])

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message = {**message, "headers": [*message.get("headers", []),
                                                  *((n, v) for n, v in extra if n not in present)]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
