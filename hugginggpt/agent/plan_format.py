"""The plan's format as the planner writes it: its JSON schema (task names as an enum, each task
with its own argument names), a plan written that way (for demonstrations), and the reading of a
plan out of an LLM's free-text answer.

A planner writes ``{"step", "task", "id", "args"}`` per step (``step``: its own words for what the task
does, read by nobody after parsing): HuggingGPT's ``dep`` list is left out, because
validation rebuilds it from the ``<resource>-N`` references anyway (``plan_repair.py``); a ``dep``
that a planner writes regardless is read and ignored the same way.
"""

from __future__ import annotations

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
