"""THE list of plan passes, in the order they run, and ``validate_plan``, which runs it.

Every step between reading the planner's answer (``parse.read_plan``) and the plan the scheduler runs
is a pass ``(plan, context) -> (plan, repairs)``: it returns a new plan (it never changes the one it
was given) and a reason for each change. Two kinds:

- *validity* passes make a plan that cannot run as written runnable (an unknown task or argument
  name, a missing required argument, a reference to itself or to nothing, a file nobody has, a read of
  the wrong kind of output, a cycle), or reject what cannot be made so; a plan that can run passes
  through them unchanged;
- *preference* passes change a runnable plan; each keeps every correct plan unchanged, in every
  language, so none reads the request's words.

A rejection (a repair whose reason starts with "rejected") makes the planner ask the model once more
(``planner.py``). ``benchmarks/revalidate.py`` switches passes off by name to measure each one on
recorded answers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import MAX_TASKS, Plan, Repair
from hugginggpt.agent.plan.parse import read_plan
from hugginggpt.agent.plan.preference import (each_listed_file, edits_beside_unread_maps, given_files_named_in_texts,
                                              without_analyses_of_the_message, without_earlier_asks,
                                              without_repeated_analyses)
from hugginggpt.agent.plan.references import (drawings_on_maps, drawings_on_photos, kind_true_references,
                                              makers_of_what_is_read, media_read_as_text, own_marks_read,
                                              readable_references)
from hugginggpt.agent.plan.validity import known_arguments, known_task_names, rebuilt_dep, runnable_graph
from hugginggpt.tools.table import TaskSpec

PassFunction = Callable[[Plan, PlanContext], tuple[Plan, list[Repair]]]


@dataclass(frozen=True)
class PlanPass:
    """One pass: its switch name, its kind, and the function."""

    name: str
    kind: Literal["validity", "preference"]
    run: PassFunction


PASSES: tuple[PlanPass, ...] = (
    PlanPass("task-names", "validity", known_task_names),
    PlanPass("arguments", "validity", known_arguments),
    PlanPass("references", "validity", readable_references),
    PlanPass("earlier-asks", "preference", without_earlier_asks),
    PlanPass("media-text", "validity", media_read_as_text),
    PlanPass("files-in-text", "preference", given_files_named_in_texts),
    PlanPass("repeats", "preference", without_repeated_analyses),
    PlanPass("own-message", "preference", without_analyses_of_the_message),
    PlanPass("makers", "validity", makers_of_what_is_read),
    PlanPass("kinds", "validity", kind_true_references),
    PlanPass("own-marks", "validity", own_marks_read),
    PlanPass("maps", "validity", drawings_on_maps),
    PlanPass("half-pairs", "preference", edits_beside_unread_maps),
    PlanPass("photo-maps", "validity", drawings_on_photos),
    PlanPass("listed-files", "preference", each_listed_file),
    PlanPass("graph", "validity", runnable_graph),
    PlanPass("dep", "validity", rebuilt_dep),
)
"""The passes, in order. ``graph`` and ``dep`` cannot be switched off: without them the scheduler
would get a plan it cannot order."""

ALWAYS = frozenset({"graph", "dep"})
SWITCHABLE = tuple(p.name for p in PASSES if p.name not in ALWAYS)


def is_rejection(repair: Repair) -> bool:
    """Whether ``repair`` took a task out of the plan."""
    return str(repair.get("reason", "")).startswith("rejected")


def run_passes(plan: Plan, ctx: PlanContext, *, without: Collection[str] = ()) -> tuple[Plan, list[Repair]]:
    """``plan`` through every pass of ``PASSES`` but those named in ``without``; each repair names its pass."""
    unknown = set(without) - set(SWITCHABLE)
    if unknown:
        raise ValueError(f"no switchable plan pass named {sorted(unknown)} (switchable: {', '.join(SWITCHABLE)})")
    repairs: list[Repair] = []
    for plan_pass in PASSES:
        if plan_pass.name in without:
            continue
        plan, made = plan_pass.run(plan, ctx)
        made = [{**r, "pass": plan_pass.name} for r in made]
        gone = {r["task_id"] for r in made if is_rejection(r) and r.get("task_id") is not None}
        if gone:
            ctx = replace(ctx, rejected=ctx.rejected | gone)
        repairs.extend(made)
    return plan, repairs


def validate_plan(raw: Any, known: Mapping[str, TaskSpec], request: str | None = None,
                  max_tasks: int | None = MAX_TASKS, *, without: Collection[str] = (),
                  given: Collection[str] | None = None, words: str | None = None,
                  answer_before: str | None = None,
                  turns: Collection[tuple[str, str]] = ()) -> tuple[Plan, list[Repair]]:
    """Read a parsed plan (``raw``: the answer's JSON) and run the passes on it with ``request`` (the
    user's text as the planner read it, with the conversation before it if any; None when unknown: file
    checks are then skipped).

    Returns the plan (only tasks that can run) and the repairs made. Raises ``PlanError`` only when
    ``raw`` is no plan at all. An empty plan is valid: the LLM answers directly. Only the first
    ``max_tasks`` tasks are kept (``None``: all). ``without``: switchable passes to leave out.
    ``given``: the files the user gives with this request when ``request`` holds a conversation too
    (``context.given_files`` of the request alone); None: every file ``request`` names. ``words``: the
    user's own text when ``request`` holds more (the conversation, the attached files listed after it).
    ``answer_before``: the conversation's last answer (a text argument that reads a result the plan does not
    have reads what it gives). ``turns``: the conversation's earlier asks, each with the answer it got.
    """
    return validated(raw, PlanContext.of(known, request, max_tasks, given, words, answer_before, turns),
                     without=without)


def validated(raw: Any, ctx: PlanContext, *, without: Collection[str] = ()) -> tuple[Plan, list[Repair]]:
    """``validate_plan`` with the plan's context made already (the planner makes it once per request, for
    the passes and for ``check.problems``)."""
    plan, repairs = read_plan(raw, ctx.max_tasks)
    plan, more = run_passes(plan, ctx, without=without)
    return plan, [*repairs, *more]
