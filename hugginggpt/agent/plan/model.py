"""The task plan as data: pydantic models, reference spellings, and the tasks a planner may use.

A plan is HuggingGPT's ``[{"task", "id", "dep", "args"}]``, each step with the planner's own words for
it (``step``) when it wrote them. ``<resource>-N`` in an argument stands for the output of task N.
Reading an LLM's answer into a plan is ``parse.py``'s job; making it runnable, ``passes.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from hugginggpt.tools.resources.refs import CANONICAL_REF as CANONICAL_REF  # re-exported: plans use them
from hugginggpt.tools.resources.refs import RESOURCE_REF as RESOURCE_REF
from hugginggpt.tools.resources.refs import canonical_refs as canonical_refs
from hugginggpt.tools.resources.refs import ref_ids
from hugginggpt.tools.table import MEDIA_KINDS, ArgSpec, TaskSpec

MAX_TASKS = 10
"""The most tasks a plan may hold (the JSON schema's ``maxItems``, and what validation keeps by default):
a small model otherwise can loop until its token limit, and a provider may ignore ``maxItems``."""


@dataclass(frozen=True)
class ArgInfo:
    """One argument as the planner and scheduler see it (``kind`` decides what a reference yields).

    For a table task it is ``ArgInfo.of(spec_arg)``, made from the table's ``ArgSpec`` and nothing else;
    for any other tool it is read from the tool's argument schema (``task_info_from_tool``)."""

    name: str
    kind: str = "text"
    required: bool = False
    items: str | None = None

    @classmethod
    def of(cls, arg: ArgSpec) -> ArgInfo:
        """The table argument ``arg`` as the planner sees it."""
        return cls(arg.name, arg.kind, arg.required, arg.items)

    @property
    def value_kind(self) -> str:
        """The kind of one value of this argument: its items' kind for a list (text when unsaid)."""
        return (self.items or "text") if self.kind == "list" else self.kind


@dataclass(frozen=True)
class TaskInfo:
    """A task the agent can run: a view of a table task, or any LangChain tool described by its schema.

    The task table (``tools/tasks.yaml`` -> ``tools/table.TaskSpec``) is where a task's arguments, their
    kinds and its outputs are defined. A table task's ``TaskInfo`` is ``TaskInfo.of(spec)``, the one
    conversion, and keeps that ``spec`` (the plan's JSON schema is made from it); a tool outside the table
    has ``spec`` None and what its schema says (outputs unknown)."""

    name: str
    description: str
    args: tuple[ArgInfo, ...] = ()
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    """Output kinds of the result envelope (``text image audio video data``); () when unknown."""
    spec: TaskSpec | None = field(default=None, compare=False, repr=False)
    """The table task this is a view of; None for a tool outside the table."""

    @classmethod
    def of(cls, spec: TaskSpec) -> TaskInfo:
        """A table task as the agent sees it: everything from ``spec``."""
        return cls(spec.name, spec.description, tuple(ArgInfo.of(a) for a in spec.args),
                   choices={a.name: tuple(a.choices) for a in spec.args if a.choices},
                   outputs=tuple(spec.outputs), spec=spec)

    @property
    def in_table(self) -> bool:
        """Whether this is a task of the table (models are selected for it from the catalog)."""
        return self.spec is not None

    def arg(self, name: str) -> ArgInfo | None:
        return next((a for a in self.args if a.name == name), None)

    def produces(self, arg_kind: str) -> bool:
        """Whether this task's output can fill an argument of ``arg_kind`` (False when outputs are unknown)."""
        if arg_kind in MEDIA_KINDS:
            return arg_kind in self.outputs
        return bool({"text", "data"} & set(self.outputs))


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
    a label for people (progress, the chat page, the trace); validation and scoring never read it."""
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


def whole_ref(value: Any) -> int | None:
    """The task id when ``value`` is exactly one ``<resource>-N`` (white space aside), else None."""
    match = CANONICAL_REF.fullmatch(value.strip()) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def refs_in(value: Any) -> set[int]:
    """Ids of the tasks whose outputs ``value`` (an argument: text, list or dict) uses."""
    return set(ref_ids(_flatten_text(value)))


def media_read(reader: PlanTask, source: int, known: dict[str, TaskInfo]) -> str | None:
    """The media kind (image, audio, video) as which ``reader`` takes task ``source``'s output; None
    when it reads it as text or data, or not at all."""
    info = known.get(reader.task)
    for name, value in reader.args.items():
        arg = info.arg(name) if info is not None else None
        if arg is not None and arg.value_kind in MEDIA_KINDS and source in refs_in(value):
            return arg.value_kind
    return None


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


def _kind_from_schema(name: str, prop: dict[str, Any]) -> str:
    """Guess an argument's kind for a tool outside the task table (the Hub's names decide media)."""
    for media in MEDIA_KINDS:
        if name == media or name.endswith(f"_{media}") or name.startswith(f"{media}_"):
            return media
    kind = prop.get("type")
    if kind in ("number", "integer"):
        return "number"
    if kind == "array":
        return "list"
    return "text"


def task_info_from_spec(spec: TaskSpec) -> TaskInfo:
    """A table ``TaskSpec`` as the agent sees it (``TaskInfo.of``)."""
    return TaskInfo.of(spec)


def task_info_from_tool(tool: Any) -> TaskInfo:
    """Any LangChain tool as a task: its name, description and argument schema."""
    schema = tool.args_schema
    if schema is None:
        schema = {}
    elif not isinstance(schema, dict):
        schema = schema.model_json_schema()
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    args = tuple(ArgInfo(n, _kind_from_schema(n, p), n in required) for n, p in props.items())
    choices = {n: tuple(p["enum"]) for n, p in props.items() if isinstance(p.get("enum"), list)}
    return TaskInfo(tool.name, (tool.description or "").strip(), args, choices=choices)


def describe_tools(tools: list[Any], table: dict[str, Any] | None = None) -> dict[str, TaskInfo]:
    """The available tasks by name: table tasks keep the table's kinds, other tools their schema."""
    table = table or {}
    return {
        t.name: task_info_from_spec(table[t.name]) if t.name in table else task_info_from_tool(t) for t in tools
    }
