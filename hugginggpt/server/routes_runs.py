"""The runs API for UIs: start a run (JSON or multipart with files), follow its stage events (SSE,
replayed from the start), read its result and files, cancel it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, StreamingResponse

from hugginggpt.build import agent_input
from hugginggpt.server.errors import ApiError
from hugginggpt.server.files import confined_file, read_form, read_upload, store_upload
from hugginggpt.server.messages import ChatRequest, parse_messages
from hugginggpt.server.runs import FINISHED, Run, RunRegistry
from hugginggpt.server.settings import ServerSettings
from hugginggpt.server.stages import media_kind
from hugginggpt.server.sse import HEARTBEAT_S, KEEP_ALIVE, SSE_HEADERS, read_json, sse

router = APIRouter()


def registry(request: Request) -> RunRegistry:
    return request.app.state.registry


#: The fields of a run request, as JSON or as a form (whose files come under ``files``).
RUN_FIELDS = ("input", "chat_history", "agent", "plan_only")
FORM_FILES = ("files", "file")


def check_fields(names: Any, allowed: tuple[str, ...] = RUN_FIELDS) -> None:
    """400 naming the fields a run does not take: a misspelt field is not silently ignored."""
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown[:8]))}: "
                            f"a run takes {', '.join(RUN_FIELDS)} (and files under 'files' in a form)")


def check_plan_only(value: Any) -> bool:
    """``plan_only`` as JSON (true/false) or as a form field ("true"/"false", "1"/"0")."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ApiError(400, "'plan_only' must be true or false")


def check_history(value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
            isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
            for m in value):
        raise ApiError(400, "'chat_history' must be a list of {\"role\": \"user\"|\"assistant\", \"content\": str}")
    return [{"role": m["role"], "content": m["content"]} for m in value]


def check_text(value: Any, max_chars: int) -> str:
    if not isinstance(value, str):
        raise ApiError(400, "missing 'input': send {\"input\": \"what to do\"}")
    if not value.strip():
        raise ApiError(400, "'input' is empty")
    if len(value) > max_chars:
        raise ApiError(413, f"'input' is longer than the limit of {max_chars} characters", code="message_too_long")
    return value


async def start_from_form(request: Request, runs: RunRegistry) -> Run:
    settings = runs.settings
    form = await read_form(request, max_files=settings.max_files, max_file_bytes=settings.max_upload_bytes,
                           max_fields=16, max_part_size=4 * settings.max_message_chars)
    try:
        check_fields(form.keys(), RUN_FIELDS + FORM_FILES)
        text = check_text(form.get("input"), settings.max_message_chars)
        plan_only = check_plan_only(form.get("plan_only"))
        history_raw = form.get("chat_history")
        try:
            history = check_history(json.loads(history_raw) if isinstance(history_raw, str) and history_raw else None)
        except json.JSONDecodeError:
            raise ApiError(400, "'chat_history' must be a JSON list") from None
        agent = form.get("agent")
        uploads = [f for key, f in form.multi_items() if key in FORM_FILES and not isinstance(f, str)]
        run = runs.create(agent if isinstance(agent, str) else None, plan_only=plan_only)
        try:
            files = [(await read_upload(f, settings.max_upload_bytes), f.filename) for f in uploads]
            paths = await asyncio.to_thread(store_uploads, files, run.folder / "uploads")
        except BaseException:
            runs.discard(run)
            raise
    finally:
        await form.close()
    return runs.start(run, agent_input(text, history, paths))


def store_uploads(files: list[tuple[bytes, str | None]], folder: Path) -> list[str]:
    """Write each (bytes, file name) into ``folder`` (``store_upload``); their absolute paths."""
    return [str(store_upload(data, name, folder)) for data, name in files]


def chat_request(body: Any, settings: ServerSettings) -> ChatRequest:
    """A chat body (JARVIS's and OpenAI's) read under the server's limits on text and attached files."""
    return parse_messages(body, max_chars=settings.max_message_chars, max_files=settings.max_files,
                          max_file_bytes=settings.max_upload_bytes)


async def read_body(request: Request, runs: RunRegistry) -> Any:
    """The JSON body of a request that starts a run: at most 4 bytes per character of the longest
    message, and 64 KiB for the rest."""
    return await read_json(request, 4 * runs.settings.max_message_chars + 65536)


async def read_chat(request: Request, agent_key: str) -> tuple[RunRegistry, Any, ChatRequest, str | None]:
    """A chat body (JARVIS's and OpenAI's): the registry, the body, its chat request, and the agent that
    the body's ``agent_key`` names (None: the default one)."""
    runs = registry(request)
    body = await read_body(request, runs)
    chat = chat_request(body, runs.settings)
    agent = body.get(agent_key)
    if agent is not None and not isinstance(agent, str):
        raise ApiError(400, f"'{agent_key}' must be a string (an agent: see GET /v1/models)")
    return runs, body, chat, agent


async def start_chat(runs: RunRegistry, chat: ChatRequest, agent: str | None, *, plan_only: bool = False) -> Run:
    """A run for a chat request (JARVIS and OpenAI bodies): files sent inside the messages are stored
    in the run's folder and given to the agent."""
    run = runs.create(agent, plan_only=plan_only)
    try:
        paths = await asyncio.to_thread(store_uploads, chat.attachments, run.folder / "uploads")
    except BaseException:
        runs.discard(run)
        raise
    return runs.start(run, agent_input(chat.input, chat.chat_history, paths))


@router.post("/runs", status_code=201)
async def create_run(request: Request) -> dict[str, Any]:
    """JSON ``{"input", "chat_history"?, "agent"?, "plan_only"?}`` or multipart (fields ``input``,
    ``chat_history`` as JSON, ``agent``, ``plan_only``, files under ``files``) -> ``{"id", "events",
    "status"}``; a field of any other name is a 400."""
    runs = registry(request)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        run = await start_from_form(request, runs)
    elif content_type.startswith("application/x-www-form-urlencoded"):  # unbounded in Starlette's parser
        raise ApiError(415, "send JSON {\"input\": ...} or a multipart/form-data form (fields and files)",
                       code="unsupported_media_type")
    else:
        body = await read_body(request, runs)
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object {\"input\": ...}")
        check_fields(body)
        text = check_text(body.get("input"), runs.settings.max_message_chars)
        history = check_history(body.get("chat_history"))
        plan_only = check_plan_only(body.get("plan_only"))
        agent = body.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise ApiError(400, "'agent' must be a string")
        run = runs.start(runs.create(agent, plan_only=plan_only), agent_input(text, history, []))
    return {"id": run.id, "status": run.status, "events": f"{run.base_url}/events"}


@router.get("/runs/{run_id}")
async def get_run(run_id: str, request: Request) -> dict[str, Any]:
    return registry(request).get(run_id).summary()


@router.get("/runs/{run_id}/events")
async def run_events(run_id: str, request: Request) -> StreamingResponse:
    """SSE of the run's events from the start (or after ``Last-Event-ID``), ending with ``end``."""
    run = registry(request).get(run_id)
    last = request.headers.get("last-event-id", "").strip()
    if last and not (last.isdigit() and len(last) <= 18):
        raise ApiError(400, "Last-Event-ID must be the number of an event of this run", code="invalid_event_id")
    start = int(last) + 1 if last else 0

    async def stream():
        index = start
        async for event in run.follow(start, HEARTBEAT_S):
            if event is None:
                yield KEEP_ALIVE
                continue
            yield sse(event, event=event.get("event"), id=index)
            index += 1

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)


@router.get("/runs/{run_id}/files/{name:path}")
async def run_file(run_id: str, name: str, request: Request, download: bool = False) -> FileResponse:
    """A file of the run: media inline (unless ``download``), anything else as an attachment, so a
    browser never renders a file a model or a download wrote as a page (``headers.py`` adds nosniff
    and a sandbox policy)."""
    run = registry(request).get(run_id)
    path = confined_file(run.folder, name)
    inline = not download and media_kind(path.name) != "file"
    return FileResponse(path, filename=path.name, content_disposition_type="inline" if inline else "attachment")


@router.delete("/runs/{run_id}")
async def cancel_run(run_id: str, request: Request) -> dict[str, Any]:
    runs = registry(request)
    run = runs.get(run_id)
    if not runs.cancel(run):
        raise ApiError(409, f"run {run_id!r} has already finished ({run.status}); nothing to cancel",
                       code="run_finished")
    await runs.wait(run)
    return {"id": run.id, "status": run.status}


def outcome_or_error(run: Run) -> None:
    """Raise the HTTP error for a run that did not finish well (used by the blocking endpoints)."""
    if run.status == "done":
        return
    if run.status == "cancelled":
        raise ApiError(409, f"run {run.id} was cancelled", code="cancelled")
    status = 504 if run.error and run.error.startswith("timed out") else 500
    raise ApiError(status, f"run {run.id} failed: {run.error}", code="run_failed")


async def wait_or_cancel(request: Request, run: Run, poll_s: float = 0.5) -> Run:
    """Wait for a run to end; if the client goes away first, cancel the run."""
    runs = registry(request)
    while run.status not in FINISHED:
        try:
            await asyncio.wait_for(asyncio.shield(run.ended.wait()), poll_s)
        except TimeoutError:
            if await request.is_disconnected():
                runs.cancel(run)
                await runs.wait(run)
    return run
