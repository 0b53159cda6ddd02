"""JARVIS's server endpoints (``awesome_chat.py --mode server``), same paths and bodies:
``{"messages": [{"role", "content"}, ...]}``, the last message the request, the earlier its history.

- POST /tasks -> the plan, a JSON list of tasks in HuggingGPT's format
- POST /results -> the results by task id: ``{id: {"task", "choose model result", "inference result", "status"}}``
- POST /hugginggpt -> ``{"message": answer}``
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from hugginggpt.server.routes_runs import outcome_or_error, read_chat, start_chat, wait_or_cancel
from hugginggpt.server.runs import Run

router = APIRouter()


async def _run(request: Request, *, plan_only: bool = False) -> Run:
    runs, _, chat, agent = await read_chat(request, "agent")
    run = await start_chat(runs, chat, agent, plan_only=plan_only)
    await wait_or_cancel(request, run)
    outcome_or_error(run)
    return run


@router.post("/tasks")
async def tasks(request: Request) -> list[dict[str, Any]]:
    run = await _run(request, plan_only=True)
    return list(run.output.get("plan") or [])


@router.post("/results")
async def results(request: Request) -> dict[str, Any]:
    run = await _run(request)
    plan = {step.get("id"): step for step in run.output.get("plan") or [] if isinstance(step, dict)}
    selections = run.output.get("selections") or {}
    answer = {}
    for task_id, outcome in (run.output.get("results") or {}).items():
        inference = outcome.get("result") if outcome.get("status") == "ok" else {"error": outcome.get("error")}
        answer[str(task_id)] = {"task": plan.get(task_id, {"task": outcome.get("task")}),
                                "choose model result": selections.get(task_id),
                                "inference result": inference, "status": outcome.get("status")}
    return answer


@router.post("/hugginggpt")
async def hugginggpt(request: Request) -> dict[str, Any]:
    run = await _run(request)
    return {"message": run.output.get("output", "")}
