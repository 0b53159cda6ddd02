"""JARVIS's server endpoints (``awesome_chat.py --mode server``), same paths and bodies:
``{"messages": [{"role", "content"}, ...]}``, the last message the request, the earlier its history.

- POST /tasks -> the plan, a JSON list of tasks in HuggingGPT's format
- POST /results -> the results by task id: ``{id: {"task", "choose model result", "inference result", "status"}}``
- POST /hugginggpt -> ``{"message": answer}``
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from hugginggpt.server.bodies import JarvisRequest, request_body
from hugginggpt.server.routes_runs import outcome_or_error, start_chat, wait_or_cancel
from hugginggpt.server.runs import Run

router = APIRouter()
BODY = request_body(JarvisRequest)


async def _run(request: Request, *, plan_only: bool = False) -> tuple[Run, dict[str, Any]]:
    """The request's run, once it has ended well, and its output as the server shows it (file paths as URLs)."""
    _, run = await start_chat(request, JarvisRequest, "agent", plan_only=plan_only)
    await wait_or_cancel(request, run)
    outcome_or_error(request, run)
    return run, run.public(run.output)


@router.post("/tasks", openapi_extra=BODY)
async def tasks(request: Request) -> list[dict[str, Any]]:
    _, output = await _run(request, plan_only=True)
    return list(output.get("plan") or [])


@router.post("/results", openapi_extra=BODY)
async def results(request: Request) -> dict[str, Any]:
    _, output = await _run(request)
    plan = {step.get("id"): step for step in output.get("plan") or [] if isinstance(step, dict)}
    selections = output.get("selections") or {}
    answer = {}
    for task_id, outcome in (output.get("results") or {}).items():
        inference = outcome.get("result") if outcome.get("status") == "ok" else {"error": outcome.get("error")}
        answer[str(task_id)] = {"task": plan.get(task_id, {"task": outcome.get("task")}),
                                "choose model result": selections.get(task_id),
                                "inference result": inference, "status": outcome.get("status")}
    return answer


@router.post("/hugginggpt", openapi_extra=BODY)
async def hugginggpt(request: Request) -> dict[str, Any]:
    _, output = await _run(request)
    return {"message": output.get("output", "")}
