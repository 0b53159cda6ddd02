"""The plan's format as the planner writes it: its JSON schema (task names as an enum, each task
with its own argument names), a plan written that way (for demonstrations), and the reading of a
plan out of an LLM's free-text answer, cut off or not.

A planner writes ``{"step", "task", "id", "args"}`` per step (``step``: its own words for what the task
does, read by nobody after parsing): HuggingGPT's ``dep`` list is left out, because
validation rebuilds it from the ``<resource>-N`` references anyway (``plan_repair.py``); a ``dep``
that a planner writes regardless is read and ignored the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from typing import Any

from hugginggpt.agent.plan import MAX_TASKS, TaskInfo
from hugginggpt.errors import PlanError
from hugginggpt.llm.json_text import find_json
from hugginggpt.tools.schemas import PLAN_STEP_KEYS, step_schema


def _arg_schema(kind: str, choices: tuple[str, ...] | None) -> dict[str, Any]:
    if kind == "number":
        return {"anyOf": [{"type": "number"}, {"type": "string"}]}
    if kind == "list":
        return {"type": "array", "items": {"type": "string"}}
    if choices:
        return {"type": "string", "enum": list(choices)}
    return {"type": "string"}


def plan_schema(tasks: dict[str, TaskInfo]) -> dict[str, Any]:
    """JSON schema of ``{"tasks": [...]}``: task names as an enum, each task with its own arguments.

    Table tasks use the table's own schema (``plan_json_schema``); other tools their argument names.
    Providers want an object at the top, hence the ``tasks`` wrapper.
    """
    if all(info.in_table for info in tasks.values()):
        from hugginggpt.tools.schemas import plan_json_schema
        from hugginggpt.tools.table import task_table

        table = task_table()
        array = plan_json_schema([table[name] for name in tasks])
    else:
        array = {"type": "array", "items": _tool_steps_schema(tasks)}
    array = {**array, "maxItems": MAX_TASKS}
    return {
        "title": "plan",
        "description": "The tasks that serve the user's request; an empty list when none is needed.",
        "type": "object",
        "properties": {"tasks": array},
        "required": ["tasks"],
    }


def _tool_steps_schema(tasks: dict[str, TaskInfo]) -> dict[str, Any]:
    variants = []
    for info in tasks.values():
        args: dict[str, Any] = {"type": "object", "additionalProperties": not info.args}
        if info.args:
            args["properties"] = {a.name: _arg_schema(a.kind, info.choices.get(a.name)) for a in info.args}
            args["required"] = [a.name for a in info.args if a.required]
        variants.append(step_schema(info.name, args))
    return {"anyOf": variants}


def plan_schema_key(tasks: dict[str, TaskInfo]) -> Hashable:
    """What ``plan_schema(tasks)`` depends on, cheaper to compute than the schema itself."""
    return ("plan", tuple((t.name, t.in_table, t.args, tuple(t.choices.items())) for t in tasks.values()))


def written_plan(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` (HuggingGPT plan steps) as the planner is asked to write them: ``step``, ``task``, ``id``, ``args``."""
    return [{key: step[key] for key in PLAN_STEP_KEYS if key in step} for step in steps]


# The one lenient JSON reader lives in hugginggpt/llm/json_text.py.


def _is_plan(value: Any) -> bool:
    return isinstance(value, list) or (isinstance(value, dict) and ("tasks" in value or "task" in value))


def parse_plan_text(text: str) -> Any:
    """The plan JSON inside an LLM answer (a list, or a dict with ``tasks``); ``PlanError`` if none."""
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
