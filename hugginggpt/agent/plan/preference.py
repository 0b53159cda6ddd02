"""Preference passes: changes to a plan that can run. Each keeps every correct plan unchanged, in any
language (the gold-fidelity test, ``tests/agent/test_gold_fidelity.py``, holds them to it), so
each reads only the plan and the task table, never the request's words.
"""

from __future__ import annotations

import json

from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import Plan, PlanTask, Repair, replace_refs


def without_repeated_analyses(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A step that repeats an earlier step exactly (the same task on the same arguments) is taken out
    when its task analyses rather than makes (it returns ``data``: a classifier, a detector, a
    similarity): it would compute the same result again. The tasks that read it read the earlier
    step. Two identical makers (two pictures of one text) stay."""
    first_of: dict[tuple[str, str], PlanTask] = {}
    moved: dict[int, int] = {}
    repairs: list[Repair] = []
    kept: list[PlanTask] = []
    for step in plan.tasks:
        key = (step.task, json.dumps(replace_refs(step.args, moved), sort_keys=True, ensure_ascii=False, default=str))
        first = first_of.get(key)
        if first is None or "data" not in ctx.known[step.task].outputs:
            first_of.setdefault(key, step)
            kept.append(step)
            continue
        moved[step.id] = first.id
        readers = [t for t in plan.tasks if t is not step and step.id in t.references()]
        repairs.append({"task_id": step.id, "reason": f"taken out: repeats task {first.id} ({step.task}) on the same "
                                                      "arguments" + (f"; the tasks that read it read task {first.id}"
                                                                     if readers else "")})
    if not moved:
        return plan, repairs
    tasks = [t.model_copy(update={"args": replace_refs(t.args, moved)}) if t.references() & moved.keys() else t
             for t in kept]
    return plan.model_copy(update={"tasks": tasks}), repairs
