"""The runs API for UIs: start a run (JSON or multipart with files), follow its stage events (SSE,
replayed from the start), read its result and files, cancel it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, StreamingResponse

from pydantic import BaseModel

from hugginggpt.build import agent_input
from hugginggpt.server.bodies import RunForm, RunRequest, request_body, validated
from hugginggpt.server.errors import ApiError
from hugginggpt.server.files import body_budget, confined_file, read_form, store_upload
from hugginggpt.server.messages import ChatRequest, parse_messages
from hugginggpt.server.runs import FINISHED, STOPPED, Run, RunRegistry, stopping_error
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


def origin(request: Request) -> str:
    """The server as the request named it (``http://host:port``): its run files' URLs start with it."""
    return str(request.base_url).rstrip("/")


async def start_from_form(request: Request, runs: RunRegistry) -> Run:
    """A run from a multipart form, admitted before its body is read; its files are copied from the
    form's temporary files into the run's folder."""
    settings = runs.settings
    with runs.admitted(body_budget(request, settings.max_form_bytes), origin(request)) as admission:
        form = await read_form(request, settings)
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
            validated(RunForm, {key: value for key, value in form.items() if isinstance(value, str)})
            uploads = [f for key, f in form.multi_items() if key in FORM_FILES and not isinstance(f, str)]
            run = admission.create(agent if isinstance(agent, str) else None, plan_only=plan_only)
            try:
                paths = await asyncio.to_thread(store_uploads, [(f.file, f.filename) for f in uploads],
                                                run.folder / "uploads")
            except BaseException:
                runs.discard(run)
                raise
        finally:
            await form.close()
    return runs.start(run, agent_input(text, history, paths))


def store_uploads(files: list[tuple[Any, str | None]], folder: Path) -> list[str]:
    """Copy each (bytes or file, file name) into ``folder`` (``store_upload``); their absolute paths."""
    return [str(store_upload(source, name, folder)) for source, name in files]


def chat_request(body: Any, settings: ServerSettings) -> ChatRequest:
    """A chat body (JARVIS's and OpenAI's) read under the server's limits on text and attached files."""
    return parse_messages(body, max_chars=settings.max_message_chars, max_files=settings.max_files,
                          max_file_bytes=settings.max_upload_bytes)


async def start_chat(request: Request, model: type[BaseModel], agent_key: str, *, plan_only: bool = False,
                     check: Callable[[Any], Any] | None = None) -> tuple[Any, Run]:
    """A run for a chat body (JARVIS's and OpenAI's, as ``model``), admitted before the body is read:
    the body and its run, started, with the files sent inside the messages stored in the run's folder.
    The body's ``agent_key`` names the agent (None: the default one); ``check``: the route's own checks
    of the body, before the run is made."""
    runs = registry(request)
    limit = runs.settings.max_json_bytes
    with runs.admitted(body_budget(request, limit), origin(request)) as admission:
        body = await read_json(request, limit)
        chat = chat_request(body, runs.settings)
        agent = body.get(agent_key)
        if agent is not None and not isinstance(agent, str):
            raise ApiError(400, f"'{agent_key}' must be a string (an agent: see GET /v1/models)")
        if check is not None:
            check(body)
        validated(model, body)
        run = admission.create(agent, plan_only=plan_only)
        try:
            paths = await asyncio.to_thread(store_uploads, chat.attachments, run.folder / "uploads")
        except BaseException:
            runs.discard(run)
            raise
    return body, runs.start(run, agent_input(chat.input, chat.chat_history, paths))


@router.post("/runs", status_code=201, openapi_extra=request_body(RunRequest, RunForm))
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
        limit = runs.settings.max_json_bytes
        with runs.admitted(body_budget(request, limit), origin(request)) as admission:
            body = await read_json(request, limit)
            if not isinstance(body, dict):
                raise ApiError(400, "the body must be a JSON object {\"input\": ...}")
            check_fields(body)
            text = check_text(body.get("input"), runs.settings.max_message_chars)
            history = check_history(body.get("chat_history"))
            plan_only = check_plan_only(body.get("plan_only"))
            agent = body.get("agent")
            if agent is not None and not isinstance(agent, str):
                raise ApiError(400, "'agent' must be a string")
            validated(RunRequest, body)
            run = runs.start(admission.create(agent, plan_only=plan_only), agent_input(text, history, []))
    return {"id": run.id, "status": run.status, "events": f"{run.base_url}/events"}


@router.get("/runs/{run_id}")
async def get_run(run_id: str, request: Request) -> dict[str, Any]:
    return registry(request).get(run_id).summary()


@router.get("/runs/{run_id}/events")
async def run_events(run_id: str, request: Request) -> StreamingResponse:
    """SSE of the run's events from the start (or after ``Last-Event-ID``), ending with ``end``."""
    run = registry(request).get(run_id)
    last = request.headers.get("last-event-id", "").strip()
    if last and not (last.isascii() and last.isdigit() and len(last) <= 18):  # not "²": isdigit, not int
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


def outcome_or_error(request: Request, run: Run) -> None:
    """Raise the HTTP error for a run that did not finish well (used by the blocking endpoints): a
    stopping server's is 503 with Retry-After."""
    if run.status == "done":
        return
    if run.error == STOPPED:
        raise stopping_error(registry(request).settings.retry_after_s)
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
