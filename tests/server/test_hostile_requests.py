"""Issue 23: what one hostile request may cost a running server (real uvicorn, local tools).

Each test failed before its fix: the request was taken whole, or the server stalled, answered 500,
or accepted a request from another site.
"""

from __future__ import annotations

import base64
import json

import httpx

from tests.server.conftest import png


def test_chat_attachments_are_counted_against_the_file_limits(make_server, tmp_path):
    """Item 1: thousands of tiny data-URI images in one chat body were all written, each named by probing
    the names taken before it, on the event loop."""
    server = make_server(max_files=3)
    pixel = "data:image/png;base64," + base64.b64encode(png(tmp_path / "p.png").read_bytes()).decode()
    many = [{"type": "image_url", "image_url": {"url": pixel}}] * 2000 + [{"type": "text", "text": "describe"}]
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for path in ("/v1/chat/completions", "/tasks", "/results", "/hugginggpt"):
            response = client.post(path, json={"messages": [{"role": "user", "content": many}]})
            assert response.status_code == 413, (path, response.status_code, response.text[:200])
            assert "more than 3 files" in response.json()["error"]["message"]
        assert list(server.settings.runs_dir.iterdir()) == []  # nothing was written
        three = many[:3] + many[-1:]
        response = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": three}]})
        assert response.status_code == 200, response.text[:300]
        run = client.get(f"/runs/{response.json()['hugginggpt']['run_id']}").json()
        uploads = sorted((server.settings.runs_dir / run["id"] / "uploads").iterdir())
        assert len(uploads) == 3 and "attachment.png" in {u.name for u in uploads}  # the first keeps its name


def test_an_attached_file_over_the_upload_limit_is_refused(make_server):
    server = make_server(max_upload_bytes=1000)
    big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(3000)).decode()
    content = [{"type": "input_audio", "input_audio": {"data": big, "format": "wav"}}, {"type": "text", "text": "x"}]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.post("/hugginggpt", json={"messages": [{"role": "user", "content": content}]})
        assert response.status_code == 413 and "limit of 1000 bytes" in response.json()["error"]["message"]
        assert json.loads(response.text)["error"]["code"] == "upload_too_large"


def test_a_chunked_upload_without_content_length_stops_at_the_limit(make_server):
    """Item 4: a multipart body sent in chunks, without Content-Length, was spooled whole (279 MiB of
    300 sent) before the size check. Now the server answers 413 once a file passes the limit, and
    the client gets to send only what the socket buffers hold beyond it."""
    server = make_server(max_upload_bytes=64 * 1024, max_files=1)
    sent = [0]
    total = 128 << 20
    boundary = "hostile-boundary"

    def body():
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\nx\r\n"
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.png\"\r\n"
                "Content-Type: image/png\r\n\r\n").encode()
        yield head
        chunk = b"\x89PNG\r\n\x1a\n" + bytes((1 << 16) - 8)
        while sent[0] < total:
            sent[0] += len(chunk)
            yield chunk

    with httpx.Client(base_url=server.url, timeout=60) as client:
        try:
            response = client.post("/runs", content=body(),
                                   headers={"content-type": f"multipart/form-data; boundary={boundary}"})
        except httpx.TransportError:  # the server closed the connection while the client was still sending
            response = None
        if response is not None:
            assert response.status_code == 413, response.text[:300]
            assert "limit of 65536 bytes" in response.json()["error"]["message"]
        assert sent[0] < 32 << 20, f"the client sent {sent[0] >> 20} MiB before the server stopped it"
        assert list(server.settings.runs_dir.iterdir()) == []
        assert client.get("/health").status_code == 200


SIMPLE_CROSS_SITE = [
    # what any web page can make the user's browser send without asking (no CORS preflight)
    ("text/plain JSON", {"content-type": "text/plain;charset=UTF-8"}, b'{"input": "hi"}'),
    ("an HTML form", {"content-type": "application/x-www-form-urlencoded"}, b"input=hi"),
    ("no content type", {}, b'{"input": "hi"}'),
]


def test_a_keyless_server_refuses_what_other_sites_can_make_a_browser_send(make_server):
    """Item 6: `text/plain` JSON, HTML forms and `Origin: http://evil.example` started runs on a
    server without a key (the default on 127.0.0.1): any page the user visited could use it."""
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for what, headers, body in SIMPLE_CROSS_SITE:
            for path in ("/runs", "/hugginggpt", "/v1/chat/completions", "/tasks"):
                response = client.post(path, content=body, headers=headers)
                assert response.status_code == 415, (what, path, response.status_code, response.text[:200])
        evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        for method, path in [("POST", "/runs"), ("POST", "/v1/chat/completions"), ("POST", "/hugginggpt"),
                             ("GET", "/v1/models"), ("GET", "/runs/x"), ("DELETE", "/runs/x"), ("GET", "/health")]:
            response = client.request(method, path, json={"input": "hi"}, headers=evil)
            assert response.status_code == 403, (method, path, response.status_code)
            assert response.json()["error"]["code"] == "cross_site_request"
        no_origin = client.post("/runs", json={"input": "hi"}, headers={"Sec-Fetch-Site": "cross-site"})
        same_site = client.post("/runs", json={"input": "hi"}, headers={"Sec-Fetch-Site": "same-site"})
        null_origin = client.post("/runs", json={"input": "hi"}, headers={"Origin": "null"})
        assert (no_origin.status_code, same_site.status_code, null_origin.status_code) == (403, 403, 403)
        assert list(server.settings.runs_dir.iterdir()) == []  # nothing ran
        # its own page, a plain link to it, and clients that are no browser all still work
        own = client.post("/runs", json={"input": "hi"},
                          headers={"Origin": server.url, "Sec-Fetch-Site": "same-origin"})
        assert own.status_code == 201
        assert client.post("/runs", json={"input": "hi"}).status_code == 201
        assert client.get("/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}).status_code == 200


def test_dns_rebinding_gets_no_answer_and_configured_names_do(make_server):
    """Item 6: any Host header was answered, so a site whose name was re-pointed at 127.0.0.1 could
    read the runs. Only local names are answered, plus those the server is told (--allow-host)."""
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "[::2]"):
            response = client.get("/v1/models", headers={"Host": host})
            assert response.status_code == 400 and response.json()["error"]["code"] == "host_not_allowed", host
        for host in ("localhost", f"127.0.0.1:{server.port}", "LOCALHOST.", "app.localhost:9", "[::1]:80"):
            assert client.get("/v1/models", headers={"Host": host}).status_code == 200, host
    named = make_server(allowed_hosts=("gpu-box.lan",))
    with httpx.Client(base_url=named.url, timeout=30) as client:
        assert client.get("/v1/models", headers={"Host": "gpu-box.lan:8000"}).status_code == 200
        assert client.get("/v1/models", headers={"Host": "other.lan"}).status_code == 400
    ui = make_server(cors_origins=("https://ui.example",))
    with httpx.Client(base_url=ui.url, timeout=30) as client:  # a configured UI on another origin is no stranger
        response = client.post("/runs", json={"input": "hi"},
                               headers={"Origin": "https://ui.example", "Sec-Fetch-Site": "cross-site"})
        assert response.status_code == 201
        assert response.headers["access-control-allow-origin"] == "https://ui.example"


def test_run_files_cannot_act_as_pages_of_the_server(make_server, tmp_path):
    """Item 7 (server side): run files were served inline with whatever type their name gave, and no
    answer carried nosniff or a content security policy."""
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        image = png(tmp_path / "cat.png")
        with image.open("rb") as handle:
            files = [("files", ("cat.png", handle, "image/png")),
                     ("files", ("notes.md", b"<script>alert(1)</script>", "text/markdown"))]
            run_id = client.post("/runs", data={"input": "hi"}, files=files).json()["id"]
        client.get(f"/runs/{run_id}/events")
        trace = client.get(f"/runs/{run_id}").json()["trace"]
        for name, disposition in (("uploads/cat.png", "inline"), ("uploads/notes.md", "attachment"),
                                  (trace, "attachment")):
            response = client.get(f"/runs/{run_id}/files/{name}")
            assert response.status_code == 200, name
            assert response.headers["content-disposition"].startswith(disposition), (name, response.headers)
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["content-security-policy"].startswith("sandbox")
        for path in ("/v1/models", "/health", "/runs/nope"):
            headers = client.get(path).headers
            assert headers["x-content-type-options"] == "nosniff" and "sandbox" in headers["content-security-policy"]
        page = client.get("/").headers
        assert page["x-content-type-options"] == "nosniff"
        assert "default-src 'self'" in page["content-security-policy"] and "sandbox" not in page["content-security-policy"]


def test_deep_json_and_a_huge_last_event_id_are_client_errors(make_server):
    """Low items: a JSON body nested 100,000 deep and a Last-Event-ID of 5,000 digits answered 500."""
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path in ("/runs", "/v1/chat/completions", "/hugginggpt"):
            for deep in ("[" * 100_000 + "]" * 100_000, '{"input": ' + "[" * 100_000):
                response = client.post(path, content=deep.encode(), headers={"content-type": "application/json"})
                assert response.status_code == 400, (path, response.status_code, response.text[:200])
        run_id = client.post("/runs", json={"input": "hi"}).json()["id"]
        response = client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "9" * 5000})
        assert response.status_code == 400 and "Last-Event-ID" in response.json()["error"]["message"]
        events = client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "0"}).text
        assert "event: end" in events and "id: 0\n" not in events  # resumes after event 0


def test_a_key_with_non_ascii_characters_can_match(make_server):
    """Low item: the header's bytes were compared as Latin-1 text re-encoded as UTF-8, so a key such
    as 'clé-ñ' could never match."""
    server = make_server(api_key="clé-ñ")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        right = client.get("/v1/models", headers={"Authorization": "Bearer clé-ñ".encode()})
        wrong = client.get("/v1/models", headers={"Authorization": "Bearer cle-n".encode()})
        assert (right.status_code, wrong.status_code) == (200, 401)


def test_a_runs_events_keep_tool_results_clipped_as_the_trace_does(tmp_path):
    """Low item: 12 results of 1 MB were kept whole, twice (task_end and the final output): 24.6 MB
    of events per run, for as long as the server keeps the run."""
    import asyncio

    from hugginggpt.agent.trace import TRACE_TEXT_CHARS
    from hugginggpt.server import ServerSettings
    from hugginggpt.server.agents import AgentPool
    from hugginggpt.server.runs import RunRegistry

    big = "x" * (1 << 20)
    results = {i: {"task": "echo", "status": "ok", "result": {"text": big}, "error": None} for i in range(12)}

    class Chatty:
        async def astream_stage_events(self, input, config=None):
            for i in range(12):
                yield {"event": "task_end", "t": 0.0, "id": i, "task": "echo", "result": {"text": big}, "seconds": 0}
            yield {"event": "final", "t": 0.0, "output": {"output": "done", "results": results}}

    async def run_once() -> int:
        registry = RunRegistry(ServerSettings(runs_dir=tmp_path / "runs"), AgentPool({"global": Chatty()}))
        run = registry.create(None)
        await registry._consume(run, Chatty())
        assert run.output["output"] == "done"
        assert run.output["results"][0]["result"]["text"].startswith("x" * TRACE_TEXT_CHARS)
        return len(json.dumps(run.events))

    size = asyncio.run(run_once())
    assert size < 24 * (TRACE_TEXT_CHARS + 1000), f"{size / (1 << 20):.1f} MiB of events"


def test_connections_that_never_finish_their_headers_are_closed(make_server):
    """Low item: sockets that never finished their headers stayed open forever (50 of 50 after 65 s).
    The deadline is the behaviour under test, so it is measured in wall time, with a wide margin."""
    import socket

    server = make_server(header_timeout_s=0.5)
    stalled = []
    for opening in (b"", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"POST /runs HTT"):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(opening)
        sock.settimeout(15)
        stalled.append(sock)
    with socket.create_connection(("127.0.0.1", server.port)) as polite:  # a whole request still works,
        polite.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # then the next one is due too
        polite.settimeout(15)
        assert polite.recv(65536).startswith(b"HTTP/1.1 200")
        polite.sendall(b"GET /health HTTP/1.1\r\n")
        assert _closed(polite)
    for sock in stalled:
        with sock:
            assert _closed(sock)


def _closed(sock) -> bool:
    """Whether the server closes ``sock`` (reads until the end of the stream; False on a timeout)."""
    import socket

    try:
        while sock.recv(65536):
            pass
    except socket.timeout:
        return False
    except ConnectionResetError:
        pass
    return True
