"""A local stand-in for an OpenAI-compatible chat server (``POST /v1/chat/completions``) on 127.0.0.1,
so a test (or a benchmark) can configure the controller as a user does (``openai:gpt-4o-mini`` with
``OPENAI_BASE_URL``, or ``--base-url``) and run offline.

It answers every agent's calls from what each asks, as a model that knows the plan would:

- planning (a JSON schema named ``plan``): the request's plan;
- model selection (a JSON schema named ``model_selection``): each task's first candidate;
- the critic (a JSON schema named ``verdict``): yes for a plan with tasks, else no;
- function calling (the body offers ``tools``): the plan's next step as one tool call, then
  ``final_answer`` when offered (else a plain answer);
- ReAct (the system prompt asks for ``Action Input:``): the plan's next step as Thought / Action /
  Action Input, then ``Final Answer:``;
- anything else (the answer): ``Answer:`` and the predictions the prompt shows (``answer_for``),
  streamed word by word when the client asks for a stream.

The request's plan is ``plans[request]`` for the longest request of ``plans`` that the request's turn
contains (the last turn of a planning call, the first user turn of a tool loop), else ``plan_for`` that
turn and the files it lists. Answers depend on
the conversation only, never on the order calls arrive in.

``OpenAIServer(latency=0.5, slots=8)`` answers each call after ``latency`` seconds with at most
``slots`` calls answered at once (the others wait their turn, as on a server with a fixed batch);
``errors(body)`` may answer a call with an error status and headers instead (a 429 with
``Retry-After``, a 500). ``server.requests`` records every request body, ``server.peak`` the most
calls answered at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
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


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _next_step(plan: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The plan's step after the ones the conversation already took (its assistant turns), or None."""
    taken = sum(len(m.get("tool_calls") or []) or (1 if m.get("role") == "assistant" else 0) for m in messages
                if m.get("role") == "assistant")
    return plan[taken] if taken < len(plan) else None


class _Answer:
    """What the stand-in answers one call: text, or tool calls."""

    def __init__(self, text: str = "", tool_calls: list[dict[str, Any]] | None = None):
        self.text, self.tool_calls = text, tool_calls or []


def _answer(body: dict[str, Any], plans: Mapping[str, list[dict[str, Any]]]) -> _Answer:
    messages = body.get("messages") or []
    last = _text(messages[-1]) if messages else ""
    first = next((_text(m) for m in messages if m.get("role") == "user"), "")

    def plan(asked: str) -> list[dict[str, Any]]:
        known = [request for request in plans if request in asked]
        return plans[max(known, key=len)] if known else plan_for(asked)

    schema = _schema_name(body)
    if schema == "plan":  # the request is the last turn (demonstrations come before it)
        return _Answer(json.dumps({"tasks": plan(last)}))
    if schema == "model_selection":
        properties = body["response_format"]["json_schema"]["schema"].get("properties", {})
        return _Answer(json.dumps({task: {"id": spec["properties"]["id"]["enum"][0], "reason": "first candidate"}
                                   for task, spec in properties.items()}))
    if schema == "verdict":
        judged = last.rsplit("Plan:", 1)[-1]
        choice = "yes" if '"task"' in judged else "no"
        return _Answer(json.dumps({"choice": choice, "reason": f"{choice}: the stand-in's verdict"}))
    if body.get("tools"):
        names = {tool.get("function", {}).get("name") for tool in body["tools"]}
        step = _next_step(plan(first), messages)
        if step is None:
            if "final_answer" in names:
                return _Answer(tool_calls=[{"name": "final_answer", "args": {"answer": "every step has run"}}])
            return _Answer("Every step has run.")
        return _Answer(tool_calls=[{"name": step["task"], "args": step.get("args") or {}}])
    system = _text(messages[0]) if messages and messages[0].get("role") == "system" else ""
    if "Action Input:" in system:  # ReAct
        step = _next_step(plan(first), messages)
        if step is None:
            return _Answer("Thought: every step has run\nFinal Answer: every step has run")
        return _Answer(f"Thought: {step.get('step') or 'the next step'}\nAction: {step['task']}\n"
                       f"Action Input: {json.dumps(step.get('args') or {})}")
    return _Answer(answer_for(last))


class OpenAIServer(LocalServer):
    """Run with ``with OpenAIServer() as server:``; ``server.url`` is the base URL (``.../v1``)."""

    base_path = "/v1"

    def __init__(self, *, plans: Mapping[str, list[dict[str, Any]]] | None = None, latency: float = 0.0,
                 slots: int | None = None,
                 errors: Callable[[dict[str, Any]], tuple[int, dict[str, str]] | None] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.plans = dict(plans or {})
        self.latency = latency
        self.errors = errors
        self.peak = 0
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self._busy = 0
        self._count = threading.Lock()
        super().__init__(_make_handler)

    def answer(self, body: dict[str, Any]) -> _Answer:
        """The answer to one call, after ``latency`` seconds in one of the ``slots``."""
        if self._slots is not None:
            self._slots.acquire()
        try:
            with self._count:
                self._busy += 1
                self.peak = max(self.peak, self._busy)
            if self.latency:
                time.sleep(self.latency)
            return _answer(body, self.plans)
        finally:
            with self._count:
                self._busy -= 1
            if self._slots is not None:
                self._slots.release()


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(404, b'{"error": {"message": "not found"}}', "application/json")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            with server._count:
                server.requests.append(body)
                number = len(server.requests)
            failure = server.errors(body) if server.errors else None
            if failure is not None:
                status, headers = failure
                error = {"error": {"message": f"stand-in error {status}", "type": "stand_in", "code": status}}
                return self._send(status, json.dumps(error).encode(), "application/json", headers)
            answer = server.answer(body)
            head = {"id": f"chatcmpl-{number}", "created": int(time.time()), "model": body.get("model", "")}
            usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
            calls = [{"id": f"call-{number}-{i}", "type": "function",
                      "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}
                     for i, call in enumerate(answer.tool_calls)]
            if not body.get("stream"):
                message: dict[str, Any] = {"role": "assistant", "content": answer.text or None if calls else answer.text}
                if calls:
                    message["tool_calls"] = calls
                reply = {**head, "object": "chat.completion", "usage": usage,
                         "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "logprobs": None,
                                      "message": message}]}
                return self._send(200, json.dumps(reply).encode(), "application/json")
            pieces = re.findall(r"\S+\s*", answer.text) or [answer.text]
            chunks = [{**head, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": piece}}]}
                      for piece in pieces]
            if calls:
                chunks.append({**head, "object": "chat.completion.chunk", "choices": [{
                    "index": 0, "finish_reason": None,
                    "delta": {"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]}}]})
            chunks.append({**head, "object": "chat.completion.chunk", "usage": usage,
                           "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "delta": {}}]})
            stream = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
            self._send(200, stream.encode(), "text/event-stream")

        def _send(self, status: int, payload: bytes, content_type: str, headers: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout under test)

    return Handler
