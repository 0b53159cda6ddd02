"""The OpenAI-compatible API: any OpenAI client or chat UI talks to HuggingGPT.

POST /v1/chat/completions: without ``stream`` a ``chat.completion``; with ``"stream": true`` SSE
``chat.completion.chunk`` events ending with ``data: [DONE]``. Each stage event rides along in a
chunk with an empty delta, under the extension field ``hugginggpt_event`` (OpenAI clients ignore
it); the answer comes as content, piece by piece as the controller writes it (``response_delta``
events), then whatever follows the written text (notes, the failure report). Dropping the stream cancels the run. ``model`` picks the agent
(GET /v1/models lists them; ``hugginggpt`` is the server's default).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from hugginggpt.agent.events import FINAL, RESPONSE_DELTA
from hugginggpt.server.errors import ApiError, error_body
from hugginggpt.server.bodies import ChatCompletionRequest, request_body
from hugginggpt.server.routes_runs import outcome_or_error, registry, start_chat, wait_or_cancel
from hugginggpt.server.runs import FINISHED, Run
from hugginggpt.server.sse import HEARTBEAT_S, KEEP_ALIVE, SSE_HEADERS, sse
from hugginggpt.server.stages import run_files

router = APIRouter(prefix="/v1")


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    agents = registry(request).agents
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "hugginggpt"}
                                       for name in (*agents.names, "hugginggpt")]}


def _usage(run: Run) -> dict[str, int]:
    """Token usage of the run's LLM calls, from its trace (zeros when the trace has none)."""
    prompt = completion = 0
    trace = (run.output or {}).get("trace")
    if trace and Path(trace).is_file():
        try:
            usage = json.loads(Path(trace).read_text(encoding="utf-8")).get("usage") or {}
            prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (OSError, ValueError, TypeError, AttributeError):
            pass
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _extension(run: Run) -> dict[str, Any]:
    output = run.output or {}
    return {"run_id": run.id, "plan": run.public(output.get("plan")), "results": run.public(output.get("results")),
            "files": run_files(output, run.folder, run.base_url)}


def _answer(run: Run) -> str:
    """The run's answer as the server shows it (file paths as URLs)."""
    return run.public(run.output.get("output", ""))


@router.post("/chat/completions", openapi_extra=request_body(ChatCompletionRequest))
async def chat_completions(request: Request) -> Any:
    def stream_flag(body: Any) -> bool:
        stream = body.get("stream", False)
        if not isinstance(stream, bool):
            raise ApiError(400, "'stream' must be true or false")
        return stream

    body, run = await start_chat(request, ChatCompletionRequest, "model", check=stream_flag)
    completion_id, created = f"chatcmpl-{run.id}", int(time.time())
    if body.get("stream", False):
        return StreamingResponse(_chunks(request, run, completion_id, created), media_type="text/event-stream",
                                 headers=SSE_HEADERS)
    await wait_or_cancel(request, run)
    outcome_or_error(request, run)
    return {"id": completion_id, "object": "chat.completion", "created": created, "model": run.agent,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": _answer(run)},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": _usage(run), "hugginggpt": _extension(run)}


async def _chunks(request: Request, run: Run, completion_id: str, created: int):
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return sse({"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": run.agent,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra})

    streamed = ""
    try:
        yield chunk({"role": "assistant", "content": ""})
        async for event in run.follow(heartbeat_s=HEARTBEAT_S):
            if event is None:
                yield KEEP_ALIVE
                continue
            if event["event"] == "end":
                break
            if event["event"] == RESPONSE_DELTA:  # the answer as the controller writes it
                streamed += event.get("text") or ""
                yield chunk({"content": event.get("text") or ""})
            elif event["event"] != FINAL:
                yield chunk({}, hugginggpt_event=event)
        if run.status == "done":
            answer = _answer(run)
            yield chunk({"content": answer[len(streamed):] if answer.startswith(streamed) else answer})
            yield chunk({}, "stop", usage=_usage(run), hugginggpt=_extension(run))
        else:
            try:
                outcome_or_error(request, run)
            except ApiError as exc:
                yield sse(error_body(exc.message, exc.code, exc.status))
        yield sse("[DONE]")
    finally:  # the client dropped the stream (or it ended): never leave a run working for nobody
        if run.status not in FINISHED:
            registry(request).cancel(run)
