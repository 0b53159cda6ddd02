"""Validity passes on what arguments read: a reference to the task itself or to no task, a media file
that neither the request nor an earlier task has, a placeholder written instead of a reference, and
a reference to a task that makes no output of the argument's kind. Each of these fails when it runs;
the argument then reads the nearest earlier task that makes its kind, else the request's one file of
that kind, else it is left for ``runnable_graph`` to reject (or execution to report).

These passes read only kinds (the task table's), file names and the plan's own graph: nothing in them
depends on the request's language. A plan whose arguments all read what they can read comes back
unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import CANONICAL_REF, Plan, PlanTask, Repair, replace_refs, whole_ref
from hugginggpt.tools.resources.mentions import looks_like_path, media_kind_of
from hugginggpt.tools.table import MEDIA_KINDS

#: Longer values are never a placeholder (bounded work).
_MAX_PLACEHOLDER = 200
#: A whole value that is a placeholder in a syntax of its own, written where a reference belongs:
#: ``{caption}``, ``$1``, ``${text}``, ``#0``, ``<output of task 0>``.
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|\$\{?\w+\}?|#\d+|<[^<>]*>")

Fix = Callable[[PlanTask, int, str, str, str], str]


class _ArgumentWalk:
    """Applies ``fix(task, position, name, kind, value)`` to each string value of each argument (each
    item of a list) of a plan, collecting the repairs the fix records; tasks are copied when changed."""

    def __init__(self, plan: Plan, ctx: PlanContext):
        self.plan = plan
        self.ctx = ctx
        self.repairs: list[Repair] = []

    def note(self, task: PlanTask, reason: str) -> None:
        self.repairs.append({"task_id": task.id, "reason": reason})

    def producer(self, position: int, kind: str) -> PlanTask | None:
        """The nearest earlier task whose output can fill an argument of ``kind``."""
        for earlier in reversed(self.plan.tasks[:position]):
            if self.ctx.known[earlier.task].produces(kind):
                return earlier
        return None

    def reread(self, task: PlanTask, position: int, kind: str, value: str, refs: list[int], said: str,
               verbs: tuple[str, str]) -> str:
        """``value`` with its references to ``refs`` reading the nearest earlier task making ``kind``
        instead, else (a whole reference, of a media kind) the request's one file of that kind; as it is
        when there is neither. The repair's reason opens with ``said``, then ``verbs`` (to a task, to a
        file) and the new source."""
        source = self.producer(position, kind)
        if source is not None:
            self.note(task, f"{said} {verbs[0]} task {source.id} ({source.task}), the nearest earlier {kind} producer")
            return replace_refs(value, {n: source.id for n in refs})
        file = self.ctx.one_file(kind) if kind in MEDIA_KINDS else None
        if whole_ref(value) is not None and file is not None:
            self.note(task, f"{said} {verbs[1]} the request's {kind} {file!r}")
            return file
        return value

    def run(self, fix: Fix, kinds: tuple[str, ...] | None = None) -> tuple[Plan, list[Repair]]:
        tasks: list[PlanTask] = []
        for position, task in enumerate(self.plan.tasks):
            info = self.ctx.known[task.task]
            args: dict[str, Any] = {}
            for name, value in task.args.items():
                arg = info.find_arg(name)
                kind = arg.value_kind if arg is not None else "text"
                if kinds is not None and kind not in kinds:
                    args[name] = value
                elif isinstance(value, list):
                    args[name] = [fix(task, position, name, kind, v) if isinstance(v, str) else v for v in value]
                else:
                    args[name] = fix(task, position, name, kind, value) if isinstance(value, str) else value
            tasks.append(task if args == task.args else task.model_copy(update={"args": args}))
        return self.plan.model_copy(update={"tasks": tasks}), self.repairs


def readable_references(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A reference to the task itself or to a task the plan does not have, a media argument naming a
    file the request does not name (no URL either), and a text argument that is a whole placeholder
    (``{caption}``, ``$1``, ``<output of task 0>``) read the nearest earlier task making the
    argument's kind, else (a whole reference or a media file) the request's one file of that kind."""
    walk = _ArgumentWalk(plan, ctx)
    ids = {t.id for t in plan.tasks}

    def fix(task: PlanTask, position: int, name: str, kind: str, value: str) -> str:
        refs = [int(n) for n in CANONICAL_REF.findall(value)]
        if refs:
            broken = [n for n in refs if n == task.id or n not in ids]
            if not broken:
                return value
            what = ", ".join("its own output" if n == task.id else f"missing task {n}" for n in broken)
            # what no source replaces is left for runnable_graph to reject, with its reason
            return walk.reread(task, position, kind, value, broken, f"argument {name!r}: {what}",
                               ("pointed to", "replaced by"))
        if ctx.request is None:
            return value
        if kind in MEDIA_KINDS:
            if readable_media(value, ctx):
                return value
            source = walk.producer(position, kind)
            if source is not None:
                walk.note(task, f"argument {name!r}={value[:60]!r} names a file the request does not mention: "
                                f"replaced by <resource>-{source.id} ({source.task})")
                return f"<resource>-{source.id}"
            file = ctx.one_file(kind)
            if file is not None and file != value:
                walk.note(task, f"argument {name!r}: {value!r} is not in the request; using its {kind} {file!r}")
                return file
            return value
        if is_placeholder(value, ctx):
            source = walk.producer(position, kind)
            if source is not None:
                walk.note(task, f"argument {name!r}={value[:60]!r} is a placeholder for an earlier result: replaced by "
                                f"<resource>-{source.id} ({source.task})")
                return f"<resource>-{source.id}"
        return value

    return walk.run(fix)


def kind_true_references(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """An argument that reads a task making no output of the argument's kind (a text-to-speech reading
    another's audio as its text, an object detection reading a classifier's label as its image) reads
    the nearest earlier task that makes that kind instead, else (a whole reference to a media kind)
    the request's one file of that kind; with neither it is left for execution to report. Only text
    and media arguments, and only tasks whose outputs are known, are checked."""
    walk = _ArgumentWalk(plan, ctx)
    by_id = plan.by_id

    def fix(task: PlanTask, position: int, name: str, kind: str, value: str) -> str:
        wrong = sorted({n for n in map(int, CANONICAL_REF.findall(value))
                        if n in by_id and n != task.id and ctx.known[by_id[n].task].outputs
                        and not ctx.known[by_id[n].task].produces(kind)})
        if not wrong:
            return value
        made = ", ".join(f"task {n} ({by_id[n].task})" for n in wrong)
        return walk.reread(task, position, kind, value, wrong, f"argument {name!r} read {made}, which makes no {kind}:",
                           ("now reads", "now"))

    return walk.run(fix, kinds=("text", *MEDIA_KINDS))


def readable_media(value: str, ctx: PlanContext) -> bool:
    """Whether a media argument's ``value`` (no reference) can be read: a URL, or a file name or path
    that the request names."""
    return "://" in value or ((media_kind_of(value) is not None or looks_like_path(value)) and ctx.names_file(value))


def is_placeholder(value: str, ctx: PlanContext) -> bool:
    """Whether a text argument's ``value`` is a whole placeholder (``{caption}``, ``$1``, ``<output>``)
    that the request does not write itself."""
    text = value.strip()
    return len(text) <= _MAX_PLACEHOLDER and _PLACEHOLDER.fullmatch(text) is not None and text not in (ctx.request or "")
