"""A local stand-in for an OpenAI-compatible chat server (``POST /v1/chat/completions``) on 127.0.0.1,
so a test can configure the controller as a user does (``openai:gpt-4o-mini`` with ``OPENAI_BASE_URL``)
and run offline.

It answers the global-plan agent's calls from what each asks:

- planning (a JSON schema named ``plan``): ``plan_for`` the request and the files the prompt lists;
- model selection (a JSON schema named ``model_selection``): each task's first candidate;
- anything else (the answer): ``Answer:`` and the predictions the prompt shows (``answer_for``),
  streamed word by word when the client asks for a stream.

``server.requests`` records every request body.
"""

from __future__ import annotations

import json
import re
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.http_servers import LocalServer

#: A file the request or the prompt's file list names.
_FILE = re.compile(r"[\w./-]+\.(?:png|jpe?g|wav|flac|mp3)\b")
_DRAW = re.compile(r"\b(?:draw|paint)\s+(?P<what>.+?)(?:,|\bthen\b|$)", re.IGNORECASE)


def plan_for(request: str) -> list[dict[str, Any]]:
    """The plan a request asks for, in the planner's schema (``step``, ``task``, ``id``, ``args``):
    "draw X" -> text-to-image of X; each file the prompt lists (else each the request names) -> its
    caption; "describe
    it" after a drawing -> the drawing's caption; "aloud" -> the last result read aloud. Else no tasks."""
    steps: list[dict[str, Any]] = []

    def add(step: str, task: str, **args: Any) -> None:
        steps.append({"step": step, "task": task, "id": len(steps), "args": args})

    drawing = _DRAW.search(request)
    if drawing:
        add("draw the picture", "text-to-image", text=drawing.group("what").strip())
    listed = [line[2:].strip() for line in request.splitlines() if line.startswith("- ") and _FILE.fullmatch(line[2:].strip())]
    for name in dict.fromkeys(listed or _FILE.findall(request)):
        add(f"describe {name}", "image-to-text", image=name)
    if drawing and re.search(r"\bdescribe it\b", request, re.IGNORECASE):
        add("describe the drawing", "image-to-text", image="<resource>-0")
    if steps and "aloud" in request.lower():
        add("read it aloud", "text-to-speech", text=f"<resource>-{len(steps) - 1}")
    return steps


def answer_for(prompt: str) -> str:
    """``Answer:`` and the predictions the prompt shows, one line each."""
    shown = [line.strip().removeprefix("prediction:").strip() for line in prompt.splitlines()
             if line.strip().startswith("prediction:")]
    return "Answer: " + (" | ".join(shown) if shown else "nothing to do")


def _schema_name(body: dict[str, Any]) -> str | None:
    format_ = body.get("response_format") or {}
    return (format_.get("json_schema") or {}).get("name") if format_.get("type") == "json_schema" else None


def _content(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    last = str(messages[-1].get("content", "")) if messages else ""
    schema = _schema_name(body)
    if schema == "plan":
        return json.dumps({"tasks": plan_for(last)})
    if schema == "model_selection":
        properties = body["response_format"]["json_schema"]["schema"].get("properties", {})
        return json.dumps({task: {"id": spec["properties"]["id"]["enum"][0], "reason": "first candidate"}
                           for task, spec in properties.items()})
    return answer_for(last)


class OpenAIServer(LocalServer):
    """Run with ``with OpenAIServer() as server:``; ``server.url`` is the base URL (``.../v1``)."""

    base_path = "/v1"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        super().__init__(_make_handler)


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(404, b'{"error": {"message": "not found"}}', "application/json")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            server.requests.append(body)
            content = _content(body)
            head = {"id": f"chatcmpl-{len(server.requests)}", "created": int(time.time()), "model": body.get("model", "")}
            usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
            if not body.get("stream"):
                answer = {**head, "object": "chat.completion", "usage": usage,
                          "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                       "message": {"role": "assistant", "content": content}}]}
                return self._send(200, json.dumps(answer).encode(), "application/json")
            pieces = re.findall(r"\S+\s*", content) or [content]
            chunks = [{**head, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": piece}}]}
                      for piece in pieces]
            chunks.append({**head, "object": "chat.completion.chunk", "usage": usage,
                           "choices": [{"index": 0, "finish_reason": "stop", "delta": {}}]})
            stream = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
            self._send(200, stream.encode(), "text/event-stream")

        def _send(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
