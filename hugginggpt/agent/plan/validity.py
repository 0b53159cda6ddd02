"""Validity passes on the plan's names and graph: a task or an argument that does not exist, a missing
required argument, a reference to the task itself or to no task, a cycle. Each makes a plan that
cannot run as written runnable, or takes out (rejects) what cannot be made so; a plan that can run
comes back unchanged.

Every pass is ``(plan, context) -> (plan, repairs)`` and changes nothing in place (``passes.py``).
"""

from __future__ import annotations

import difflib
import graphlib
import re

from hugginggpt.agent.plan.check import unmarked
from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import CANONICAL_REF, Plan, PlanTask, Repair


def rejected(task: PlanTask, reason: str) -> Repair:
    """The repair that takes ``task`` out of the plan, with its reason."""
    return {"task_id": task.id, "reason": f"rejected: {reason}"}


def known_task_names(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A task name that is not a known task becomes the known task it spells (case, ``_`` or spaces
    for ``-``) or is closest to (difflib ratio >= 0.75); with none close, the task is rejected."""
    repairs: list[Repair] = []
    kept: list[PlanTask] = []
    for task in plan.tasks:
        if task.task in ctx.known:
            kept.append(task)
            continue
        normalised = re.sub(r"[\s_]+", "-", task.task.strip().lower())
        match = normalised if normalised in ctx.known else None
        if match is None:
            close = difflib.get_close_matches(normalised, list(ctx.known), n=1, cutoff=0.75)
            match = close[0] if close else None
        if match is None:
            repairs.append(rejected(task, f"unknown task {task.task!r}"))
            continue
        repairs.append({"task_id": task.id, "reason": f"unknown task {task.task!r} replaced by the closest known task {match!r}"})
        kept.append(task.model_copy(update={"task": match}))
    return plan.model_copy(update={"tasks": kept}), repairs


def known_arguments(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """An argument name the task does not take becomes the closest free one it takes (ratio >= 0.7) or
    is dropped; a ``choice`` value not among the choices is dropped (the task's default applies); a
    task missing a required argument, or given a text without the mark it needs (fill-mask's mask
    token: in its own words, or as the whole output of a task that writes a text), is rejected. Tools that
    declare no arguments take any."""
    repairs: list[Repair] = []
    kept: list[PlanTask] = []
    by_id = plan.by_id
    for task in plan.tasks:
        info = ctx.known[task.task]
        if not info.args:
            kept.append(task)
            continue
        names = [a.name for a in info.args]
        args = dict(task.args)
        for name in list(args):
            if name in names:
                continue
            free = [n for n in names if n not in args]
            close = difflib.get_close_matches(name, free, n=1, cutoff=0.7)
            if close:
                args[close[0]] = args.pop(name)
                repairs.append({"task_id": task.id, "reason": f"argument {name!r} renamed to {close[0]!r} for task {task.task!r}"})
            else:
                del args[name]
                repairs.append({"task_id": task.id, "reason": f"argument {name!r} dropped: {task.task!r} takes {names}"})
        for arg in info.args:
            choices = arg.choices
            value = args.get(arg.name)
            if choices and isinstance(value, str) and value not in choices and not CANONICAL_REF.search(value):
                del args[arg.name]
                repairs.append({"task_id": task.id, "reason": f"argument {arg.name!r}={value!r} dropped: not one of {list(choices)}"})
        missing = [a.name for a in info.args if a.required and args.get(a.name) in (None, "", [])]
        if missing:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) is missing required argument(s) {missing}"))
            continue
        lacking = next((a for a in info.args if unmarked(a, args.get(a.name), by_id, ctx.known, ctx.request)), None)
        if lacking is not None:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) works on a {lacking.name} with "
                                          f"{' or '.join(lacking.marks or ())} in it, and "
                                          f"{str(args[lacking.name])[:60]!r} has none"))
            continue
        kept.append(task if args == task.args else task.model_copy(update={"args": args}))
    return plan.model_copy(update={"tasks": kept}), repairs


def runnable_graph(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """Rejects a task that reads its own output or a task the plan does not have, the tasks of a
    cycle, and then every task that reads a rejected one, directly or not (one walk along the "is
    read by" edges: linear in the plan's size)."""
    repairs: list[Repair] = []
    ids = {t.id for t in plan.tasks}
    out: set[int] = set()
    for task in plan.tasks:
        refs = task.references()
        gone = sorted(n for n in refs if n not in ids and n in ctx.rejected)
        missing = sorted(n for n in refs if n not in ids and n not in ctx.rejected)
        if task.id in refs:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) refers to its own output"))
        elif missing:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) uses the output of task(s) {missing}, "
                                          "which do not exist"))
        elif gone:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) depends on rejected task(s) {gone}"))
        else:
            continue
        out.add(task.id)
    by_id = plan.by_id
    graph = {t.id: t.references() & ids for t in plan.tasks if t.id not in out}
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
            break
        except graphlib.CycleError as err:
            cycle = sorted(set(err.args[1]))
            for task_id in cycle:
                if task_id not in out:
                    repairs.append(rejected(by_id[task_id], f"tasks {cycle} depend on each other in a cycle"))
                    out.add(task_id)
                graph.pop(task_id, None)
    for task in plan.readers_of(out):
        bad = sorted(task.references() & (out | set(ctx.rejected)))
        repairs.append(rejected(task, f"task {task.id} ({task.task}) depends on rejected task(s) {bad}"))
        out.add(task.id)
    if not out:
        return plan, repairs
    return plan.model_copy(update={"tasks": [t for t in plan.tasks if t.id not in out]}), repairs


def rebuilt_dep(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """Each task's ``dep`` is the ids its ``<resource>-N`` references use, sorted (HuggingGPT's
    ``dep``; a written one that differs is recorded, an unwritten one is simply filled)."""
    repairs: list[Repair] = []
    tasks: list[PlanTask] = []
    for task in plan.tasks:
        used = sorted(task.references())
        stated = sorted({d for d in task.dep if d != -1})
        if stated != used and task.dep_written:
            repairs.append({"task_id": task.id, "reason": f"dep {stated} rebuilt as {used} from the <resource>-N "
                                                          "references in its arguments"})
        tasks.append(task if task.dep == used else task.model_copy(update={"dep": used}))
    return plan.model_copy(update={"tasks": tasks}), repairs
