"""The server's API reference: /openapi.json (behind the key when one is set) and /docs, a page of the
server's own that renders it offline (no CDN), under the page's Content-Security-Policy; the Host
and same-origin checks apply to both as to every route (issue 26, part 7)."""

from __future__ import annotations

import re

import httpx
import pytest

from hugginggpt.server.routes_page import STATIC
from tests.server.test_browser import browser  # noqa: F401  (the system Chromium, skipped without it)


def test_openapi_json_describes_the_apis(make_server):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.get("/openapi.json")
        assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
        spec = response.json()
        assert spec["openapi"].startswith("3.") and spec["info"]["title"] == "hugginggpt"
        for path in ("/runs", "/runs/{run_id}/events", "/v1/chat/completions", "/v1/models", "/hugginggpt", "/health"):
            assert path in spec["paths"], path
        assert "post" in spec["paths"]["/runs"] and "/docs" not in spec["paths"] and "/" not in spec["paths"]
        # an API answer: the sandbox policy, as every non-page answer has
        assert "sandbox" in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"


def test_docs_page_is_served_with_its_own_files_and_the_page_policy(make_server):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "sandbox" not in policy  # the chat page's policy, unchanged
        # every script and style it loads is this server's own (nothing from a CDN, which the policy forbids)
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(src.startswith("/") and not src.startswith("//") for src in sources), sources
        for src in sources:
            assert client.get(src).status_code == 200, src
        assert "/openapi.json" in client.get("/static/docs.js").text
    # the script never turns spec text into HTML
    assert "innerHTML" not in (STATIC / "docs.js").read_text()


def test_with_a_key_the_spec_needs_it_and_the_docs_page_asks_for_it(make_server):
    server = make_server(api_key="s3cret")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        refused = client.get("/openapi.json")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert client.get("/openapi.json", headers={"Authorization": "Bearer nope"}).status_code == 401
        spec = client.get("/openapi.json", headers={"Authorization": "Bearer s3cret"})
        assert spec.status_code == 200 and "/runs" in spec.json()["paths"]
        page = client.get("/docs")  # the page holds nothing of the API: it asks for the key, then the spec
        assert page.status_code == 200 and 'id="api-key"' in page.text


def test_host_and_cross_site_checks_cover_the_docs(make_server):
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path in ("/docs", "/openapi.json"):
            response = client.get(path, headers={"Host": "evil.example"})
            assert response.status_code == 400 and response.json()["error"]["code"] == "host_not_allowed", path
        cross = client.get("/openapi.json", headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403


@pytest.mark.browser
def test_docs_page_renders_the_api_in_a_browser_after_asking_for_the_key(browser, make_server):  # noqa: F811 (the fixture)
    """In Chromium, offline: no request leaves the server, no policy violation, and each route shows."""
    server = make_server(api_key="s3cret")
    page = browser.new_page()
    foreign, violations = [], []
    page.on("request", lambda request: None if request.url.startswith(server.url) else foreign.append(request.url))
    page.on("console", lambda message: violations.append(message.text) if "Content Security Policy" in message.text
            else None)
    try:
        page.goto(f"{server.url}/docs")
        page.locator("#key-box:not([hidden])").wait_for(timeout=10_000)
        page.fill("#api-key", "s3cret")
        page.click("#load")
        page.locator("[data-testid=operation]").first.wait_for(timeout=10_000)
        text = page.inner_text("#docs")
        for route in ("POST/runs", "GET/runs/{run_id}/events", "POST/v1/chat/completions"):
            method, path = route.split("/", 1)
            assert re.search(rf"{method}\s*/{re.escape(path)}", text), route
        assert page.evaluate("localStorage.getItem('hugginggpt-api-key')") == "s3cret"  # shared with the chat page
    finally:
        page.close()
    assert foreign == [] and violations == []
