"""The plan as the planner writes it: its JSON schema (task names as an enum, each task with its own
argument names; made by ``tools/schemas.py``), a plan written that way (for demonstrations), the plan
read out of an LLM's answer (cut off or not), and that answer's data read into a ``Plan`` whose steps
have unique ids.

A planner writes ``{"step", "task", "id", "args"}`` per step (``step``: its own words for what the task
does): HuggingGPT's ``dep`` list is left out, because the passes rebuild it from the ``<resource>-N``
references anyway (``passes.py``); a ``dep`` that a planner writes regardless is read and ignored the
same way. Reading fixes only the form of the answer (key names, id numbering, reference spellings);
what the steps mean is the passes' business.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from typing import Any

from pydantic import BaseModel

from hugginggpt.agent.plan.model import MAX_TASKS, Plan, PlanTask, Repair, replace_refs
from hugginggpt.errors import PlanError
from hugginggpt.llm.json_text import find_json
from hugginggpt.tools.resources.refs import canonical_refs
from hugginggpt.tools.schemas import (
    PLAN_STEP_KEYS,
    plan_json_schema,
    plan_object_schema,
    plan_steps_schema,
    tool_step_json_schema,
)
from hugginggpt.tools.table import TaskSpec


def plan_schema(tasks: dict[str, TaskSpec], inputs: dict[str, tuple[str, ...]] | None = None, *,
                wants: bool = False) -> dict[str, Any]:
    """JSON schema of ``{"tasks": [...]}``: task names as an enum, each task with its own arguments, at
    most ``MAX_TASKS`` steps. Made in ``tools/schemas.py``, the one home of the plan's schema: from the
    table's specs when every task is a table task, else from each tool's argument names and kinds.
    ``inputs``: the request's files by kind, which media arguments are then held to (table tasks only)."""
    specs = list(tasks.values())
    if all(spec.in_table for spec in specs):
        return plan_object_schema(plan_json_schema(specs, inputs), MAX_TASKS, wants=wants)
    return plan_object_schema(plan_steps_schema([tool_step_json_schema(spec) for spec in specs]), MAX_TASKS,
                              wants=wants)


def plan_schema_key(tasks: dict[str, TaskSpec], inputs: dict[str, tuple[str, ...]] | None = None, *,
                    wants: bool = False) -> Hashable:
    """What ``plan_schema(tasks, inputs, wants=wants)`` depends on, cheaper to compute than the schema itself."""
    held = None if inputs is None else tuple(sorted(inputs.items()))
    return ("plan", tuple(spec.model_dump_json() for spec in tasks.values()), held, wants)


def written_plan(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` (HuggingGPT plan steps) as the planner is asked to write them: ``step``, ``task``, ``id``, ``args``."""
    return [{key: step[key] for key in PLAN_STEP_KEYS if key in step} for step in steps]


# ----- the plan in an LLM's text -----


def _is_plan(value: Any) -> bool:
    return isinstance(value, list) or (isinstance(value, dict) and ("tasks" in value or "task" in value))


def parse_plan_text(text: str) -> Any:
    """The plan JSON inside an LLM answer (a list, or a dict with ``tasks``); ``PlanError`` if none.
    The one lenient JSON reader (``llm/json_text.py``) finds it."""
    if not (text or "").strip():
        raise PlanError("the planner answered with nothing; expected a JSON array of tasks")
    try:
        return find_json(text, _is_plan)
    except ValueError:
        raise PlanError(f"no JSON plan found in the planner's answer: {text.strip()[:200]!r}") from None


_TASK_ARRAY = re.compile(r'"tasks"\s*:\s*\[|^\s*\[')


def _finished_items(text: str) -> int | None:
    """How many items of the plan's task array ``text`` writes whole, as strict JSON (a schema-held
    answer is); None when there is no task array to read that way."""
    start = _TASK_ARRAY.search(text)
    if start is None:
        return None
    decoder, pos, count = json.JSONDecoder(), start.end(), 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return count
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return count
        count += 1


def without_unfinished_task(text: str, data: Any) -> tuple[Any, int]:
    """``data``, the plan read from ``text`` (an answer that the LLM's token limit cut off), without
    the task the cut left unfinished; and how many tasks that drops (0 or 1).

    The lenient reader closes a cut-off task with ends of its own (``"args": ""``, half an argument
    value); such a task is no more the planner's than a guessed one. A schema-held answer is strict
    JSON, so its whole tasks are counted; any other answer loses its last task, where the cut fell.
    """
    tasks = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(tasks, list) or not tasks:
        return data, 0
    finished = _finished_items(text)
    keep = finished if finished is not None and finished >= len(tasks) - 1 else len(tasks) - 1
    keep = min(keep, len(tasks))
    kept = tasks[:keep]
    return ({**data, "tasks": kept} if isinstance(data, dict) else kept), len(tasks) - keep


# ----- the answer's data as a Plan -----


def read_plan(raw: Any, max_tasks: int | None = MAX_TASKS) -> tuple[Plan, list[Repair]]:
    """``raw`` (the answer's JSON: a list of steps, ``{"tasks": [...]}`` or one step) as a ``Plan``,
    and what reading it changed: the first ``max_tasks`` entries only (``None``: all), entries that
    are no task object dropped, key names LLMs drift into (``tool``, ``arguments``) read as ``task``
    and ``args``, ``[{"name", "value"}]`` argument lists read as an object, every reference spelling
    written ``<resource>-N``, and a missing or repeated id renumbered (later references to it follow).

    Raises ``PlanError`` only when ``raw`` is no plan at all (a number, a string).
    """
    repairs: list[Repair] = []
    items = _as_task_list(raw)
    if max_tasks is not None and len(items) > max_tasks:
        repairs.append(_repair(None, f"the plan has {len(items)} tasks; only the first {max_tasks} are kept "
                                     f"(at most {max_tasks} tasks per plan)"))
        items = items[:max_tasks]
    tasks: list[PlanTask] = []
    latest: dict[int, int] = {}  # id as the LLM wrote it -> id now, for references made after it
    used = {i for i in (_as_int(x.get("id")) for x in items if isinstance(x, dict)) if i is not None}
    next_free = max(used, default=-1) + 1
    seen: set[int] = set()
    for position, item in enumerate(items):
        item = _with_standard_keys(item)
        if not isinstance(item, dict) or not item.get("task"):
            repairs.append(_repair(None, f"dropped entry {position}: not a task object with a 'task' name"))
            continue
        args = item.get("args") or {}
        if _is_name_value_list(args):
            args = {a["name"]: a.get("value") for a in args}
        written = _as_int(item.get("id"))
        task_id = written
        if task_id is None or task_id in seen:
            task_id, next_free = next_free, next_free + 1
            what = "missing id" if written is None else f"duplicate id {written}"
            repairs.append(_repair(task_id, f"{what}: task {item['task']!r} renumbered to {task_id}"))
        if not isinstance(args, dict):
            repairs.append(_repair(task_id, f"args must be an object of argument names, got {type(args).__name__}; "
                                            "ignored"))
            args = {}
        args = replace_refs(canonical_refs(args), latest)
        if written is not None:
            latest[written] = task_id
        seen.add(task_id)
        dep = [d for d in (_as_int(x) for x in _as_list(item.get("dep"))) if d is not None]
        step = item.get("step")
        step = " ".join(step.split()) if isinstance(step, str) else None
        tasks.append(PlanTask(task=str(item["task"]).strip(), id=task_id, dep=dep, args=args, step=step or None,
                              dep_written="dep" in item))
    return Plan(tasks=tasks), repairs


def _repair(task_id: int | None, reason: str) -> Repair:
    return {"task_id": task_id, "reason": reason, "pass": "read"}


def _as_task_list(raw: Any) -> list[Any]:
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if isinstance(raw, dict):
        if "tasks" in raw:
            raw = raw["tasks"]
        elif "task" in raw:
            raw = [raw]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PlanError(f"a plan must be a JSON array of tasks, got {type(raw).__name__}")
    return raw


def _as_int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


_KEY_ALIASES = {"task": ("task", "tool", "name"), "args": ("args", "arguments", "parameters")}


def _with_standard_keys(item: Any) -> Any:
    """Accept the key names LLMs drift into (``tool``, ``arguments``...) for ``task`` and ``args``."""
    if not isinstance(item, dict):
        return item
    item = dict(item)
    for key, aliases in _KEY_ALIASES.items():
        if key not in item:
            found = next((a for a in aliases if a in item), None)
            if found is not None:
                item[key] = item.pop(found)
    return item


def _is_name_value_list(value: Any) -> bool:
    """``[{"name": ..., "value": ...}]``, the argument list format of some tool-use datasets."""
    return isinstance(value, list) and bool(value) and all(isinstance(a, dict) and "name" in a for a in value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    return [value]
