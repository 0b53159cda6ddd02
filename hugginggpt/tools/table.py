"""The task table as typed data: load ``tasks.yaml`` once, validate it, and look tasks up by name.

Everything task-specific elsewhere (tool schemas, prompts, the plan's JSON schema) is generated from
these models, so a malformed table fails loudly here instead of producing odd tools later.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from hugginggpt.errors import TaskTableError, UnknownTaskError, error_line, validation_problems

TABLE_PATH = Path(__file__).with_name("tasks.yaml")

#: The kinds of values: what an argument takes (``ArgKind``), which of them are files (``MEDIA_KINDS``,
#: the one list), and the outputs a result envelope may hold (``OUTPUT_KINDS``, its keys).
ArgKind = Literal["text", "image", "audio", "video", "table", "number", "list", "choice"]
MEDIA_KINDS: tuple[str, ...] = ("image", "audio", "video")
OUTPUT_KINDS: tuple[str, ...] = ("text", *MEDIA_KINDS, "data")
CATEGORIES: frozenset[str] = frozenset({"nlp", "cv", "audio", "video", "multimodal", "tabular", "time-series"})


class ArgSpec(BaseModel):
    """One argument of a task, as the LLM must fill it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: ArgKind
    required: bool = False
    default: Any = None
    description: str
    choices: list[str] | None = None
    items: str | None = None
    #: The largest value a number may take (in the args schema, the description the LLM reads, and
    #: validation): counts that size memory or time, such as ``num_frames``, are bounded here.
    maximum: float | None = None
    #: For a text the task can only use when it holds one of these marks (fill-mask's text: a mask token,
    #: ``[MASK]`` or ``<mask>``, in any letter case): a value without one cannot run (``agent/plan/check.py``).
    marks: list[str] | None = None

    @model_validator(mode="after")
    def _check_kind_details(self) -> "ArgSpec":
        if self.kind == "choice":
            if not self.choices:
                raise ValueError(f"argument {self.name!r} is a choice without choices")
            if self.default is not None and self.default not in self.choices:
                raise ValueError(f"argument {self.name!r}: default {self.default!r} is not one of its choices")
        elif self.choices is not None:
            raise ValueError(f"argument {self.name!r} has choices but is of kind {self.kind!r}")
        if self.kind == "list" and self.items not in (None, "text", "number"):
            raise ValueError(f"argument {self.name!r}: list items must be 'text' or 'number', not {self.items!r}")
        if self.kind != "list" and self.items is not None:
            raise ValueError(f"argument {self.name!r} has items but is of kind {self.kind!r}")
        if self.required and self.default is not None:
            raise ValueError(f"argument {self.name!r} is required and so cannot have a default")
        if self.maximum is not None and self.kind != "number":
            raise ValueError(f"argument {self.name!r} has a maximum but is of kind {self.kind!r}")
        if self.maximum is not None and self.default is not None and self.default > self.maximum:
            raise ValueError(f"argument {self.name!r}: default {self.default!r} is above its maximum {self.maximum!r}")
        if self.marks is not None and (self.kind != "text" or not self.marks):
            raise ValueError(f"argument {self.name!r}: marks are for a text argument, and at least one")
        return self

    def lacks_mark(self, value: Any) -> bool:
        """Whether ``value`` is a text that holds none of this argument's ``marks`` (never, without marks)."""
        return bool(self.marks) and isinstance(value, str) and not any(m.lower() in value.lower() for m in self.marks)

    def marked_with(self, value: str, token: str | None) -> str:
        """``value`` with each of this argument's ``marks``, in any letter case, written as ``token`` (a model's
        own mask token: an LLM writes ``[MASK]`` or ``<mask>`` whatever the model reads); as it is without a
        token, or when it holds ``token`` already."""
        if not token or token in value:
            return value
        for mark in self.marks or ():
            value = re.sub(re.escape(mark), lambda _: token, value, flags=re.IGNORECASE)
        return value

    @property
    def is_media(self) -> bool:
        return self.kind in MEDIA_KINDS

    @property
    def value_kind(self) -> str:
        """The kind of one value of this argument: its items' kind for a list (text when unsaid)."""
        return (self.items or "text") if self.kind == "list" else self.kind


class TaskSpec(BaseModel):
    """One task (a Hub ``pipeline_tag``, unless ``hub_tag`` is False): what it does, its arguments, its outputs.

    A LangChain tool outside the table is a ``TaskSpec`` too (``tool_spec``, ``in_table`` False): its
    arguments read from its JSON schema, its category and outputs unknown ("" and [])."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    category: str = ""
    description: str
    args: list[ArgSpec]
    outputs: list[str] = []
    #: What the result holds, when its output kinds do not say enough (a tool's description shows it;
    #: the planner's task list does not).
    returns: str = ""
    #: False for tasks named as JARVIS names them (the ControlNet family): not a Hub ``pipeline_tag``,
    #: so nothing may look Hub models, providers or TaskBench tools up by this name.
    hub_tag: bool = True
    #: Whether this is a task of the table (models are selected for it from the catalog); False for a
    #: tool outside it.
    in_table: bool = True
    #: For a task whose output is a condition map (ControlNet's annotators): the task that draws a picture
    #: along that map. A text-guided image task reading the map is that task (``agent/plan/references.py``).
    drawn_by: str | None = None
    #: For a task that draws a picture along a condition map (the ControlNet drawings): the task that makes
    #: that map from a photo (openpose-text-to-image's is openpose-control, depth-text-to-image's
    #: depth-estimation). A drawing reading a photo the user gives reads that task's map of it instead.
    map_by: str | None = None
    #: For a task that reads a text: the task that does the same job on a media file, by kind
    #: (feature-extraction's image one is image-feature-extraction). A plan giving this task such a file
    #: as its text runs that task on the file (``agent/plan/references.py``).
    on_media: dict[str, str] = Field(default_factory=dict)
    #: The media kinds whose text this task gives (automatic-speech-recognition: audio; image-to-text:
    #: image): a plan giving a text task such a file as its text reads this task's output of it instead.
    text_of: list[str] = Field(default_factory=list)
    #: For a task with a twin (the one other task taking and making the same kinds: text-to-speech and
    #: text-to-audio): what sets it apart from that twin, shown in place of the description when the planner
    #: asks which of the two a step is (``agent/plan/choices.py``).
    contrast: str = ""
    #: Other tasks of the table whose steps a planner writes as this one (a rewrite written as a classification;
    #: a question about the picture this task analyses, which the sibling reads as well): a step written as
    #: this task is asked about against each, with the ``contrast`` of both, and the step's own words fill a
    #: required text the sibling reads more; a required medium, the one earlier task making it, for a step that
    #: reads no earlier result (text generation written for "caption the picture": image-to-text;
    #: ``agent/plan/choices.py``).
    siblings: list[str] = Field(default_factory=list)
    #: For a sibling: which of its arguments takes which of this task's values when a step written as this task
    #: is renamed to it (text-ranking's ``texts`` is summarization's ``text``: a list gives its one value, and a
    #: list of several cannot be one text, so such a step is not asked about); others it lacks are filled as
    #: ``siblings`` says.
    sibling_args: dict[str, dict[str, str]] = Field(default_factory=dict)
    #: For a task that makes something from words alone: what it gives the user, in a few words ("a picture",
    #: "music or a sound"). A step written again as the same such task is asked which of these it gives
    #: (``agent/plan/repeats.py``).
    gives: str = ""
    #: Arguments whose values, given again, leave the task's own output as it is: a text already in
    #: ``tgt_lang`` translates to itself. A step running the task on the whole output of a step of the same
    #: task, with the same values of these (each written in both), finds nothing new
    #: (``agent/plan/check.own_marks``).
    settled_by: list[str] = Field(default_factory=list)

    @property
    def draws_on_map(self) -> bool:
        """Whether this task draws a picture along a condition map (``map_by`` makes the map)."""
        return self.map_by is not None

    @field_validator("args")
    @classmethod
    def _unique_args(cls, args: list[ArgSpec]) -> list[ArgSpec]:
        seen: set[str] = set()
        for arg in args:
            if arg.name in seen:
                raise ValueError(f"duplicate argument {arg.name!r}")
            seen.add(arg.name)
        return args

    @field_validator("on_media", "text_of")
    @classmethod
    def _media_kinds(cls, kinds: Any, info: ValidationInfo) -> Any:
        unknown = [kind for kind in kinds if kind not in MEDIA_KINDS]
        if unknown:
            raise ValueError(f"{info.field_name} kinds {unknown} are no media kinds ({', '.join(MEDIA_KINDS)})")
        return kinds

    @field_validator("outputs")
    @classmethod
    def _known_outputs(cls, outputs: list[str]) -> list[str]:
        unknown = [kind for kind in outputs if kind not in OUTPUT_KINDS]
        if unknown:
            raise ValueError(f"unknown output kinds {unknown} (known: {', '.join(sorted(OUTPUT_KINDS))})")
        return outputs

    @model_validator(mode="after")
    def _check_table_task(self) -> "TaskSpec":
        if self.in_table and self.category not in CATEGORIES:
            raise ValueError(f"unknown category {self.category!r} (known: {', '.join(sorted(CATEGORIES))})")
        if self.in_table and not self.outputs:
            raise ValueError("a task needs at least one output kind")
        unknown = [name for name in self.settled_by if self.find_arg(name) is None]
        if unknown:
            raise ValueError(f"settled_by names {unknown}, which are no arguments of the task")
        return self

    def arg(self, name: str) -> ArgSpec:
        """The argument called ``name``; ``KeyError`` naming the task when there is none."""
        arg = self.find_arg(name)
        if arg is None:
            raise KeyError(f"task {self.name!r} has no argument {name!r}")
        return arg

    def find_arg(self, name: str) -> ArgSpec | None:
        """The argument called ``name``; None when there is none."""
        return next((arg for arg in self.args if arg.name == name), None)

    @property
    def media_args(self) -> list[ArgSpec]:
        """The image/audio/video arguments, which take files, URLs or ``<resource>-N`` references."""
        return [arg for arg in self.args if arg.is_media]

    @property
    def required_args(self) -> list[ArgSpec]:
        return [arg for arg in self.args if arg.required]

    def produces(self, arg_kind: str) -> bool:
        """Whether this task's output can fill an argument of ``arg_kind`` (False when outputs are unknown): a
        media argument its file of that kind, a text argument its text. ``data`` alone (an embedding, the
        sources of a denoised recording, masks) is no text: a translation or a summary of it cannot run as
        meant (docs/results/dev-ab "Session 35")."""
        if arg_kind in MEDIA_KINDS:
            return arg_kind in self.outputs
        return "text" in self.outputs


def tool_spec(tool: Any) -> TaskSpec:
    """A LangChain tool outside the table as a task: its name, description and arguments from its JSON
    schema (``args_schema``); its category and outputs unknown."""
    schema = tool.args_schema
    if schema is None:
        schema = {}
    elif not isinstance(schema, dict):
        schema = schema.model_json_schema()
    required = set(schema.get("required", []))
    args = [_arg_from_schema(name, prop, name in required) for name, prop in schema.get("properties", {}).items()]
    return TaskSpec(name=tool.name, description=(tool.description or "").strip(), args=args, in_table=False)


def _arg_from_schema(name: str, prop: dict[str, Any], required: bool) -> ArgSpec:
    """One argument of a tool outside the table. Its kind is guessed: the Hub's names decide media
    (``image``, ``input_image``, ``audio_file``), then the JSON type; a text with an enum of strings is
    a choice."""
    kind = next((media for media in MEDIA_KINDS
                 if name == media or name.endswith(f"_{media}") or name.startswith(f"{media}_")), None)
    if kind is None:
        json_type = prop.get("type")
        kind = "number" if json_type in ("number", "integer") else "list" if json_type == "array" else "text"
    choices = prop.get("enum")
    if kind == "text" and isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices):
        kind = "choice"
    else:
        choices = None
    return ArgSpec(name=name, kind=kind, required=required, description=str(prop.get("description") or ""),
                   choices=choices)


def parse_table(data: Any, source: str = "task table") -> tuple[dict[str, TaskSpec], dict[str, str]]:
    """Validate raw table data (the parsed YAML) into task specs and the ``not_tools`` reasons."""
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict) or not data["tasks"]:
        raise TaskTableError(f"{source}: expected a mapping with a non-empty 'tasks' mapping")
    specs: dict[str, TaskSpec] = {}
    for name, entry in data["tasks"].items():
        if not isinstance(entry, dict):
            raise TaskTableError(f"{source}: task {name!r} must be a mapping, not {type(entry).__name__}")
        try:
            specs[name] = TaskSpec(name=name, **entry)
        except (ValidationError, TypeError) as exc:
            raise TaskTableError(f"{source}: task {name!r}: {_table_error(exc)}") from None
    for name, spec in specs.items():
        for field, other in (("drawn_by", spec.drawn_by), ("map_by", spec.map_by),
                             *((f"on_media.{kind}", task) for kind, task in spec.on_media.items())):
            if other is not None and other not in specs:
                raise TaskTableError(f"{source}: task {name!r}: {field} names {other!r}, which is no task of the table")
        for other in spec.siblings:
            if other not in specs or other == name:
                raise TaskTableError(f"{source}: task {name!r}: siblings names {other!r}, which is no other task of the "
                                     "table")
            if not (spec.contrast and specs[other].contrast):
                raise TaskTableError(f"{source}: task {name!r} and its sibling {other!r} each need a contrast")
        for other, carried in spec.sibling_args.items():
            if other not in spec.siblings:
                raise TaskTableError(f"{source}: task {name!r}: sibling_args names {other!r}, which is none of its "
                                     "siblings")
            wrong = [f"{theirs}: {mine}" for theirs, mine in carried.items()
                     if specs[other].find_arg(theirs) is None or spec.find_arg(mine) is None]
            if wrong:
                raise TaskTableError(f"{source}: task {name!r}: sibling_args for {other!r} names arguments that are "
                                     f"not {other!r}'s and {name!r}'s ({', '.join(wrong)})")
    readers: dict[str, str] = {}
    for name, spec in specs.items():
        for kind in spec.text_of:
            if kind in readers:
                raise TaskTableError(f"{source}: tasks {readers[kind]!r} and {name!r} both give the text_of {kind}")
            readers[kind] = name
    not_tools = data.get("not_tools") or {}
    if not isinstance(not_tools, dict) or not all(isinstance(v, str) and v for v in not_tools.values()):
        raise TaskTableError(f"{source}: 'not_tools' must map task names to a reason")
    overlap = sorted(set(specs) & set(not_tools))
    if overlap:
        raise TaskTableError(f"{source}: {overlap} are both tools and not_tools")
    return specs, {str(k): v for k, v in not_tools.items()}


def load_table(path: str | Path = TABLE_PATH) -> tuple[dict[str, TaskSpec], dict[str, str]]:
    """Read and validate a task table file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TaskTableError(f"{path}: cannot read the task table: {exc}") from None
    return parse_table(data, source=str(path))


@cache
def _shipped() -> tuple[dict[str, TaskSpec], dict[str, str]]:
    return load_table(TABLE_PATH)


def map_makers(known: Mapping[str, TaskSpec]) -> set[str]:
    """The tasks of ``known`` that make a condition map of a picture (a depth map, canny edges, a pose): some
    drawing's ``map_by``, or a task with a drawing along its output (``drawn_by``). A map is an analysis of the
    picture, not a new version of it."""
    return {spec.map_by for spec in known.values() if spec.map_by} | {n for n, s in known.items() if s.drawn_by}


def media_makers(known: Mapping[str, TaskSpec]) -> set[str]:
    """The tasks of ``known`` whose result is a picture, sound or video: they make a medium, no text and no condition
    map (``map_makers``): a drawing, an edit, a cleaned sound; not a detection (its boxed picture is not what it
    finds), nor a depth map."""
    maps = map_makers(known)
    return {name for name, spec in known.items()
            if set(spec.outputs) & set(MEDIA_KINDS) and not spec.produces("text") and name not in maps}


def task_table() -> dict[str, TaskSpec]:
    """All tool tasks by name, in table order (loaded once; do not mutate the returned dict)."""
    return _shipped()[0]


def get_task(name: str) -> TaskSpec:
    """The spec of task ``name``; ``UnknownTaskError`` (with close matches) when there is none."""
    table = task_table()
    try:
        return table[name]
    except KeyError:
        raise UnknownTaskError(name, list(table)) from None


def text_marks() -> tuple[str, ...]:
    """The marks a text argument of the table can need (``ArgSpec.marks``: fill-mask's mask tokens), once each."""
    return tuple(dict.fromkeys(m for spec in task_table().values() for arg in spec.args for m in arg.marks or ()))


def hub_tasks() -> list[str]:
    """The tasks whose name is a Hub ``pipeline_tag`` (all but JARVIS's ControlNet family), in table order."""
    return [name for name, spec in task_table().items() if spec.hub_tag]


def non_tool_tasks() -> dict[str, str]:
    """Hub tags that are deliberately not tools, with the reason for each."""
    return dict(_shipped()[1])


def _table_error(exc: Exception) -> str:
    """What is wrong in a task's entry: pydantic's fields (``errors.validation_problems``), else the error line."""
    return validation_problems(exc, "field") if isinstance(exc, ValidationError) else error_line(exc)
