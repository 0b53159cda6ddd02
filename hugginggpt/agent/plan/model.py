"""The task plan as data: pydantic models, reference spellings, and the tasks a planner may use (each a
``tools/table.TaskSpec``: a table task's own, or one read from a tool's argument schema).

A plan is HuggingGPT's ``[{"task", "id", "dep", "args"}]``, each step with the planner's own words for
it (``step``) when it wrote them. ``<resource>-N`` in an argument stands for the output of task N.
Reading an LLM's answer into a plan is ``parse.py``'s job; making it runnable, ``passes.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, Field

from hugginggpt.tools.resources.refs import CANONICAL_REF as CANONICAL_REF  # re-exported: plans use them
from hugginggpt.tools.resources.refs import RESOURCE_REF as RESOURCE_REF
from hugginggpt.tools.resources.refs import canonical_refs as canonical_refs
from hugginggpt.tools.resources.refs import ref_ids
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec, tool_spec

MAX_TASKS = 10
"""The most tasks a plan may hold (the JSON schema's ``maxItems``, and what validation keeps by default):
a small model otherwise can loop until its token limit, and a provider may ignore ``maxItems``."""


Repair = dict[str, Any]
"""One change to a plan, with its reason: ``{"task_id": int | None, "reason": str, "pass": name}``;
a reason starting with "rejected" took a task out (the planner is then asked again)."""


class PlanTask(BaseModel):
    """One step of a plan."""

    task: str
    id: int
    dep: list[int] = Field(default_factory=list)
    args: dict[str, Any] = Field(default_factory=dict)
    step: str | None = None
    """The planner's words for what this task does ("transcribe lecture.wav"), None when it wrote none:
    a label for people (progress, the chat page, the trace); scoring never reads it, and validation only to
    tell a step that quotes an earlier ask of the conversation (``preference.without_earlier_asks``)."""
    dep_written: bool = Field(default=False, exclude=True)
    """Whether the planner's answer had a ``dep`` list for this step (a planner need not write one)."""

    def references(self) -> set[int]:
        """Ids of the tasks whose outputs this task's arguments use."""
        return refs_in(self.args)


class Plan(BaseModel):
    """A validated plan: known tasks, unique ids, acyclic, ``dep`` equal to the references used."""

    tasks: list[PlanTask] = Field(default_factory=list)

    @property
    def by_id(self) -> dict[int, PlanTask]:
        return {t.id: t for t in self.tasks}

    def as_list(self) -> list[dict[str, Any]]:
        """The contract's ``[{"task", "id", "dep", "args"}]``, with ``step`` where the planner wrote one."""
        return [t.model_dump(exclude_none=True) for t in self.tasks]

    def merged(self, moved: Mapping[int, int]) -> Plan:
        """This plan without the tasks ``moved`` names, each task that read one reading ``moved[id]`` instead."""
        return self.model_copy(update={"tasks": [
            t.model_copy(update={"args": replace_refs(t.args, dict(moved))}) if t.references() & moved.keys() else t
            for t in self.tasks if t.id not in moved]})

    def readers_of(self, ids: Collection[int]) -> list[PlanTask]:
        """The tasks that read a task of ``ids``, directly or through other tasks, each once, in the order a
        walk along the "is read by" edges meets them (linear in the plan's size)."""
        users: dict[int, list[PlanTask]] = {}
        for task in self.tasks:
            for ref in task.references():
                users.setdefault(ref, []).append(task)
        seen = set(ids)
        pending = list(ids)
        found: list[PlanTask] = []
        while pending:
            for task in users.get(pending.pop(), ()):
                if task.id not in seen:
                    seen.add(task.id)
                    found.append(task)
                    pending.append(task.id)
        return found


def whole_ref(value: Any) -> int | None:
    """The task id when ``value`` is exactly one ``<resource>-N`` (white space aside), else None."""
    match = CANONICAL_REF.fullmatch(value.strip()) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def refs_in(value: Any) -> set[int]:
    """Ids of the tasks whose outputs ``value`` (an argument: text, list or dict) uses."""
    return set(ref_ids(_flatten_text(value)))


def media_files(args: Any, spec: TaskSpec) -> list[tuple[str, str, str]]:
    """``(argument, kind, value)`` of each media argument of ``args`` (a task's arguments, for ``spec``) that holds
    a file or URL: a non-empty text with no ``<resource>-N``. Empty when ``args`` is no mapping."""
    if not isinstance(args, Mapping):
        return []
    found = []
    for name, value in args.items():
        arg = spec.find_arg(name)
        if arg is not None and arg.value_kind in MEDIA_KINDS and isinstance(value, str) and value.strip() \
                and not refs_in(value):
            found.append((name, arg.value_kind, value))
    return found


def media_read(reader: PlanTask, source: int, known: dict[str, TaskSpec]) -> str | None:
    """The media kind (image, audio, video) as which ``reader`` takes task ``source``'s output; None
    when it reads it as text or data, or not at all."""
    spec = known.get(reader.task)
    for name, value in reader.args.items():
        arg = spec.find_arg(name) if spec is not None else None
        if arg is not None and arg.value_kind in MEDIA_KINDS and source in refs_in(value):
            return arg.value_kind
    return None


def done_on_file(task: PlanTask, arg: str, file: str, target: TaskSpec, kind: str, *, keep: bool = False) -> PlanTask:
    """``task`` done by ``target`` on ``file``: ``target``'s argument of ``kind`` reads the file in place of
    ``task``'s argument ``arg`` (which stays too when ``keep`` and ``target`` takes it: a text naming the file
    among other words is what to do with it); its other arguments are kept where ``target`` has them."""
    into = next(a.name for a in target.args if a.kind == kind)
    args = {into: file, **{k: v for k, v in task.args.items() if (keep or k != arg) and target.find_arg(k)}}
    return task.model_copy(update={"task": target.name, "args": args})


def work_key(task: str, args: Any) -> tuple[str, str]:
    """What a step computes, as a key: its task and its arguments written canonically. Two steps with one key
    do the same work."""
    return task, json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def replace_refs(value: Any, mapping: dict[int, int]) -> Any:
    """``value`` with each ``<resource>-N`` whose N is in ``mapping`` pointing at ``mapping[N]`` instead."""
    if isinstance(value, str):
        return CANONICAL_REF.sub(lambda m: f"<resource>-{mapping.get(int(m.group(1)), int(m.group(1)))}", value)
    if isinstance(value, dict):
        return {k: replace_refs(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_refs(v, mapping) for v in value]
    return value


def _flatten_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(_flatten_text(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return " ".join(_flatten_text(v) for v in value)
    return ""


def describe_tools(tools: list[Any], table: dict[str, TaskSpec] | None = None) -> dict[str, TaskSpec]:
    """The available tasks by name: a tool that carries its own spec (``metadata["spec"]``: a benchmark
    domain's tool reading another kind than the table's task, ``eval/compare.placeholder_tools``) is that
    spec, a table task its ``TaskSpec``, another tool the spec its argument schema gives
    (``tools/table.tool_spec``)."""
    table = table or {}

    def spec_of(tool: Any) -> TaskSpec:
        own = (getattr(tool, "metadata", None) or {}).get("spec")
        if own is not None:
            return TaskSpec.model_validate(own)
        return table[tool.name] if tool.name in table else tool_spec(tool)

    return {t.name: spec_of(t) for t in tools}
