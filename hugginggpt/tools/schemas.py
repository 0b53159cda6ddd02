"""Schemas generated from the task table: a pydantic args model per task, and a plan's JSON schema
(THE home of the plan schema: the planner's ``agent/plan/parse.plan_schema`` is made here, for table
tasks from their specs and for other tools from their argument names and kinds).

The args models validate what an LLM fills in (a wrong or misspelt argument fails, naming it); the
plan schema constrains the planning LLM's output. The JSON schema keeps to keywords that llama.cpp's
JSON-schema-to-grammar converter supports (``type``, ``enum``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``anyOf``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model

from hugginggpt.llm.json_grammar import ITEM_STATES
from hugginggpt.tools.table import MEDIA_KINDS, ArgSpec, TaskSpec

MEDIA_HINT = "A local file path, an http(s) URL, or <resource>-N for the output of task N."
#: The longest text (or path) argument a tool accepts, and the longest request an agent accepts: bounds
#: what one request can cost in prompts, traces and parsers.
MAX_TEXT_CHARS = 200_000


def _bounded_table(table: Any) -> Any:
    """An inline table counts as text: at most ``MAX_TEXT_CHARS`` characters in its names and cells."""
    if isinstance(table, dict):
        size = sum(len(name) + sum(len(cell) for cell in cells) for name, cells in table.items())
        if size > MAX_TEXT_CHARS:
            raise ValueError(f"the table holds {size:,} characters; at most {MAX_TEXT_CHARS:,} (pass a CSV file)")
    return table


TableValue = Annotated[dict[str, list[str]] | Annotated[str, Field(max_length=MAX_TEXT_CHARS)],
                       AfterValidator(_bounded_table)]


def model_name(task: str) -> str:
    """CamelCase of a task name: ``text-to-speech`` -> ``TextToSpeech``."""
    return "".join(part[:1].upper() + part[1:] for part in task.replace("_", "-").split("-") if part)


def is_integer(arg: ArgSpec) -> bool:
    """A number is an integer unless its default is a fraction (thresholds, scales)."""
    return arg.kind == "number" and not isinstance(arg.default, float)


def arg_description(arg: ArgSpec) -> str:
    """The argument's description plus what values it takes, for tools and prompts."""
    if arg.maximum is not None:
        return f"{arg.description} At most {arg.maximum:g}."
    if arg.is_media:
        return f"{arg.description} {MEDIA_HINT}"
    if arg.kind == "table":
        return f"{arg.description} May be <resource>-N."
    return arg.description


def _python_type(arg: ArgSpec) -> tuple[Any, dict[str, Any]]:
    """The Python type of an argument and its pydantic ``Field`` constraints."""
    if arg.kind == "number":
        if is_integer(arg):
            # Counts (a positive default) start at 1; integers without a default (seeds) at 0.
            bounds: dict[str, Any] = {"ge": 1 if isinstance(arg.default, int) and arg.default > 0 else 0}
            if arg.maximum is not None:
                bounds["le"] = int(arg.maximum)
            return int, bounds
        bounds = {"ge": 0.0}
        if arg.name.endswith("threshold"):
            bounds["le"] = 1.0
        if arg.maximum is not None:
            bounds["le"] = float(arg.maximum)
        return float, bounds
    if arg.kind == "list":
        if arg.items == "number":
            return list[float], {"min_length": 1}
        return list[Annotated[str, Field(max_length=MAX_TEXT_CHARS)]], {"min_length": 1}
    if arg.kind == "choice":
        return Literal[tuple(arg.choices or ())], {}
    if arg.kind == "table":
        return TableValue, {}
    return str, {"max_length": MAX_TEXT_CHARS}  # text, image, audio, video


def args_model(spec: TaskSpec) -> type[BaseModel]:
    """The pydantic model of ``spec``'s arguments (extra keys forbidden), named after the task."""
    return _args_model(spec.model_dump_json())


@cache
def _args_model(spec_json: str) -> type[BaseModel]:
    # Keyed by the spec's JSON: specs hold lists, so they are not hashable themselves.
    spec = TaskSpec.model_validate_json(spec_json)
    fields: dict[str, Any] = {}
    for arg in spec.args:
        annotation, constraints = _python_type(arg)
        description = arg_description(arg)
        if arg.required:
            fields[arg.name] = (annotation, Field(..., description=description, **constraints))
        else:
            optional = annotation if arg.default is not None else annotation | None
            fields[arg.name] = (optional, Field(arg.default, description=description, **constraints))
    return create_model(
        model_name(spec.name),
        __config__=ConfigDict(extra="forbid"),
        __doc__=spec.description,
        **fields,
    )


def arg_json_schema(arg: ArgSpec) -> dict[str, Any]:
    """A grammar-friendly JSON schema for one argument."""
    if arg.kind == "number":
        return {"type": "integer" if is_integer(arg) else "number"}
    if arg.kind == "list":
        return {"type": "array", "items": {"type": "number" if arg.items == "number" else "string"}}
    if arg.kind == "choice":
        return {"type": "string", "enum": list(arg.choices or ())}
    if arg.kind == "table":
        columns = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}
        return {"anyOf": [columns, {"type": "string"}]}
    return {"type": "string"}


def json_types(prop: dict[str, Any]) -> list[str]:
    """The JSON types one property of a tool's argument schema allows, ``null`` left out (an optional
    argument is ``anyOf`` its type and null); [] when the property names none."""
    kinds = [prop["type"]] if isinstance(prop.get("type"), str) else list(prop.get("type") or [])
    for option in prop.get("anyOf") or []:
        if isinstance(option, dict):
            kinds += json_types(option)
    return [k for k in dict.fromkeys(kinds) if isinstance(k, str) and k != "null"]


def args_json_schema(spec: TaskSpec) -> dict[str, Any]:
    """A grammar-friendly JSON schema of a task's ``args`` object."""
    return {
        "type": "object",
        "properties": {arg.name: arg_json_schema(arg) for arg in spec.args},
        "required": [arg.name for arg in spec.required_args],
        "additionalProperties": False,
    }


PLAN_STEP_KEYS = ("step", "task", "id", "args")
"""The keys of one plan step as a planner writes it, in order.

``step`` comes first: a few words of the request saying the one thing this step does, written
before the task is named. Validation ignores it.

No ``dep``: a step's dependencies are the ``<resource>-N`` references in its arguments, and
validation rebuilds ``dep`` from them (``agent/plan/passes.py``).

Why: docs/results/design-notes.md.
"""


def step_schema(task: str, args: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of one plan step running ``task`` with arguments ``args`` (a JSON schema)."""
    return {
        "type": "object",
        "properties": {"step": {"type": "string"}, "task": {"type": "string", "enum": [task]},
                       "id": {"type": "integer"}, "args": args},
        "required": list(PLAN_STEP_KEYS),
        "additionalProperties": False,
    }


def step_json_schema(spec: TaskSpec) -> dict[str, Any]:
    """The JSON schema of one plan step that runs ``spec``: ``{"step", "task", "id", "args"}``."""
    return step_schema(spec.name, args_json_schema(spec))


REFERENCE_PATTERN = "^<resource>-[0-9]{1,2}$"
"""A whole ``<resource>-N``: how a media argument reads an earlier task's output."""


def input_value_schema(values: Iterable[str], references: bool) -> dict[str, Any] | None:
    """What a media (or table file) argument may hold: one of ``values`` (the files and URLs the request
    gives), or an earlier task's ``<resource>-N`` when ``references``; None when nothing is possible."""
    options: list[dict[str, Any]] = []
    values = list(dict.fromkeys(values))
    if values:
        options.append({"type": "string", "enum": values})
    if references:
        options.append({"type": "string", "pattern": REFERENCE_PATTERN})
    if not options:
        return None
    return options[0] if len(options) == 1 else {"anyOf": options}


def step_input_schema(spec: TaskSpec, inputs: dict[str, tuple[str, ...]],
                      references: bool | Collection[str]) -> dict[str, Any] | None:
    """The step schema of ``spec`` whose media arguments read only ``inputs`` of their kind, and earlier
    results (``<resource>-N``) of the kinds in ``references`` (True: of every kind, False: none), and whose
    table arguments read only the request's table files (``inputs["table"]``; no task makes one); None when a
    required media or table argument could read nothing (a table task for a request that gives no table:
    a chart or a photo of a sheet is an image, which an image task reads), or when a required text needs a
    mark the request does not write (``inputs["mark"]``, when given: fill-mask for a request with no mask
    token, whose text no step could hold one for)."""
    args = args_json_schema(spec)
    properties = dict(args["properties"])
    for arg in spec.args:
        if arg.marks and arg.required and "mark" in inputs and not set(arg.marks) & set(inputs["mark"]):
            return None
        if not arg.is_media and arg.kind != "table":
            continue
        if arg.kind == "table":
            readable = False
        else:
            readable = references if isinstance(references, bool) else arg.kind in references
        value = input_value_schema(inputs.get(arg.kind, ()), readable)
        if value is None:
            if arg.required:
                return None
            properties.pop(arg.name)
        else:
            properties[arg.name] = value
    return step_schema(spec.name, {**args, "properties": properties,
                                   "required": [n for n in args["required"] if n in properties]})


def kind_states(specs: list[TaskSpec], inputs: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """The plan's steps as a finite state machine (``llm/json_grammar.ITEM_STATES``): a state is the set of
    media kinds that earlier tasks make; in it, a step is a task whose media arguments read the request's
    files of their kind (``inputs``) or an earlier result of a kind made so far, and the next step is chosen
    in the state grown by what that task makes. The first step reads only the request's files. So a plan
    decoded under it never reads an image, audio or video that neither the request nor an earlier task
    gives, at any step."""
    steps: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    states: dict[str, list[list[Any]]] = {}

    def name(made: frozenset[str]) -> str:
        return "+".join(sorted(made)) or "none"

    todo, seen = [frozenset()], {frozenset()}
    while todo:
        made = todo.pop(0)
        options = []
        for spec in specs:
            schema = step_input_schema(spec, inputs, made)
            if schema is None:
                continue
            key = json.dumps(schema, sort_keys=True)
            if key not in index:
                index[key] = len(steps)
                steps.append(schema)
            after = made | {kind for kind in MEDIA_KINDS if spec.produces(kind)}
            options.append([index[key], name(after)])
            if after not in seen:
                seen.add(after)
                todo.append(after)
        states[name(made)] = options
    return {"start": name(frozenset()), "items": steps, "states": states}


def plan_json_schema(specs: Iterable[TaskSpec] | None = None,
                     inputs: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """The JSON schema of a whole plan: a list of steps, each one of the given tasks with its own args.

    Each step is an ``anyOf`` branch per task, so a task's name fixes which argument names are
    allowed. ``<resource>-N`` in an argument refers to step N's output.

    With ``inputs`` (the files and URLs of the request by kind: ``agent/plan/context.request_inputs``), a
    media argument holds one of them or a ``<resource>-N``, and the first step, which has no earlier
    result to read, is one of the tasks whose media arguments the request's own files can fill
    (``prefixItems``, then ``items``): a plan cannot read a file the request does not give, and a table task
    is offered only for a request that gives a table file. A grammar of
    the schema holds every step tighter (``kind_states``, under ``ITEM_STATES``): a media argument reads an
    earlier result only of a kind an earlier task makes.
    """
    if specs is None:
        from hugginggpt.tools.table import task_table

        specs = task_table().values()
    specs = list(specs)
    if inputs is None:
        return plan_steps_schema([step_json_schema(spec) for spec in specs])
    first = [step for step in (step_input_schema(spec, inputs, False) for spec in specs) if step is not None]
    later = [step for step in (step_input_schema(spec, inputs, True) for spec in specs) if step is not None]
    return {"type": "array", "prefixItems": [{"anyOf": first}], "items": {"anyOf": later},
            ITEM_STATES: kind_states(specs, inputs)}


def plan_steps_schema(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan as a list of steps, each matching one of ``steps`` (step schemas, one per task)."""
    if not steps:
        raise ValueError("a plan schema needs at least one task")
    return {"type": "array", "items": {"anyOf": steps}}


def tool_arg_json_schema(kind: str, choices: Iterable[str] | None = None) -> dict[str, Any]:
    """A grammar-friendly JSON schema for one argument of a tool outside the task table, whose ``kind``
    was guessed from its schema (a number may come as text)."""
    if kind == "number":
        return {"anyOf": [{"type": "number"}, {"type": "string"}]}
    if kind == "list":
        return {"type": "array", "items": {"type": "string"}}
    if choices:
        return {"type": "string", "enum": list(choices)}
    return {"type": "string"}


def tool_step_json_schema(spec: TaskSpec) -> dict[str, Any]:
    """The JSON schema of one plan step running ``spec`` in a plan with tools outside the table (their
    argument kinds guessed from their schemas, ``table.tool_spec``). A tool without arguments takes any."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": not spec.args}
    if spec.args:
        schema["properties"] = {arg.name: tool_arg_json_schema(arg.kind, arg.choices) for arg in spec.args}
        schema["required"] = [arg.name for arg in spec.required_args]
    return step_schema(spec.name, schema)


WANTED_KINDS = ("text", "image", "audio", "video")
"""What a user may want back from a request: the kinds a plan's ``wants`` names."""


def plan_object_schema(array: dict[str, Any], max_items: int, *, wants: bool = False) -> dict[str, Any]:
    """The planner's answer, ``{"tasks": array}`` with at most ``max_items`` steps: providers want an
    object at the top, hence the ``tasks`` wrapper. With ``wants``, the answer first names the kinds of
    result the user wants back (``{"wants": [...], "tasks": [...]}``, kinds of ``WANTED_KINDS``)."""
    properties: dict[str, Any] = {}
    if wants:
        properties["wants"] = {"type": "array", "items": {"type": "string", "enum": list(WANTED_KINDS)},
                               "maxItems": len(WANTED_KINDS)}
    properties["tasks"] = {**array, "maxItems": max_items}
    return {
        "title": "plan",
        "description": "The tasks that serve the user's request; an empty list when none is needed.",
        "type": "object",
        "properties": properties,
        "required": list(properties),
    }
