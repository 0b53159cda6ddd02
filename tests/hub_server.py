"""A local stand-in of the Hugging Face Hub's download endpoints, for tests that point HF_ENDPOINT at it.

It serves the repos it is given (``{repo_id: {filename: bytes}}``) the way the Hub does:

- ``HEAD``/``GET /{repo}/resolve/{revision}/{file}``: ETag, X-Repo-Commit and Content-Length headers, the
  bytes on GET; 404 with ``X-Error-Code: EntryNotFound`` / ``RepoNotFound`` otherwise;
- ``GET /api/models/{repo}`` and ``/api/models/{repo}/revision/{revision}``: model info with ``sha`` and
  ``siblings`` (what ``snapshot_download`` reads);
- ``GET /api/models/{repo}/tree/{revision}``: the file listing (``list_repo_files``).

``requests`` records ``(method, path)`` of each request.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer:
    def __init__(self, repos: dict[str, dict[str, bytes]]):
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self):  # noqa: N802
                server._answer(self, body=False)

            def do_GET(self):  # noqa: N802
                server._answer(self, body=True)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> "HubServer":
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------ routes

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlparse(handler.path).path)
        self.requests.append((handler.command, path))
        if path.startswith("/api/models/"):
            self._api(handler, path.removeprefix("/api/models/"), body)
            return
        repo, sep, rest = path.lstrip("/").partition("/resolve/")
        files = self.repos.get(repo)
        if not sep or files is None:
            self._error(handler, "RepoNotFound", "Repository not found")
            return
        _revision, _, filename = rest.partition("/")
        data = files.get(filename)
        if data is None:
            self._error(handler, "EntryNotFound", "Entry not found")
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        handler.send_header("X-Repo-Commit", COMMIT)
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    def _api(self, handler: BaseHTTPRequestHandler, rest: str, body: bool) -> None:
        for marker in ("/tree/", "/revision/"):
            if marker in rest:
                repo, _, _ = rest.partition(marker)
                kind = marker.strip("/")
                break
        else:
            repo, kind = rest, "revision"
        files = self.repos.get(repo)
        if files is None:
            self._error(handler, "RepoNotFound", "Repository not found")
            return
        if kind == "tree":
            payload = [{"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                       for name, data in files.items()]
        else:
            payload = {"id": repo, "modelId": repo, "sha": COMMIT, "private": False,
                       "siblings": [{"rfilename": name, "size": len(data)} for name, data in files.items()]}
        raw = json.dumps(payload).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        if body:
            handler.wfile.write(raw)

    @staticmethod
    def _error(handler: BaseHTTPRequestHandler, code: str, message: str) -> None:
        handler.send_response(404)
        handler.send_header("X-Error-Code", code)
        handler.send_header("X-Error-Message", message)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
