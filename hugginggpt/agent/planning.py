"""Stage 1, task planning: turn a request into a validated plan with one LLM call (two at most).

The prompt is HuggingGPT's: a specification of the plan format and the available tasks one per
line (static: the same for every request, so llama.cpp reuses its prefix state), then few-shot
demonstrations chosen per request from our pool (``agent/demonstrations.py``), the trimmed chat
history, and the request. When the model supports structured output the answer is constrained by the plan's JSON
schema; otherwise the text is parsed leniently. An unusable plan is re-asked once, with the error.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
    trim_messages,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from hugginggpt.agent.demonstrations import DEFAULT_K, select_demonstrations
from hugginggpt.agent.plan import MAX_TASKS, Plan, Repair, TaskInfo
from hugginggpt.agent.plan_repair import validate_plan
from hugginggpt.agent.trace import Trace, UsageCounter
from hugginggpt.errors import LLMError, PlanError
from hugginggpt.llm.content import content_text
from hugginggpt.llm.json_text import find_json
from hugginggpt.prompts import load_demonstrations, render_prompt

Structured = bool | Literal["auto"]



@dataclass
class PlanResult:
    """What planning produced: the plan, the repairs made, and the LLM's raw answers."""

    plan: Plan
    repairs: list[Repair] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    prompt: list[dict[str, str]] = field(default_factory=list)
    structured: bool = False


# ---------------------------------------------------------------- prompt


def format_task_list(tasks: dict[str, TaskInfo]) -> str:
    """One line per task: ``name(arg*, arg) -> outputs: description`` (short, for small context windows).

    The output kinds tell the planner which task can feed which (an image-producing task feeds an
    ``image`` argument), which is what chaining with ``<resource>-N`` needs."""
    lines = []
    for info in tasks.values():
        args = ", ".join(a.name + ("*" if a.required else "") for a in info.args)
        outputs = [kind for kind in info.outputs if kind != "data"] or list(info.outputs)
        produces = f" -> {'/'.join(outputs)}" if outputs else ""
        description = info.description.split("\n")[0].strip()
        if len(description) > 90:
            description = description[:87].rstrip() + "..."
        lines.append(f"- {info.name}({args}){produces}: {description}".rstrip(": "))
    return "\n".join(lines)


def usable_demonstrations(tasks: dict[str, TaskInfo]) -> list[dict[str, Any]]:
    """Demonstrations whose tasks are all available (others would teach the model wrong names)."""
    return [d for d in load_demonstrations() if all(step["task"] in tasks for step in d["plan"])]


def demonstrations_for(user_input: str, tasks: dict[str, TaskInfo], k: int = DEFAULT_K) -> list[dict[str, Any]]:
    """The ``k`` usable demonstrations most similar to the request (BM25 over our pool)."""
    return select_demonstrations(user_input, tasks, k)


def _user_text(user_input: str, files: list[str]) -> str:
    if not files:
        return user_input
    return f"{user_input}\n(Files given: {', '.join(str(f) for f in files)})"


def trim_history(chat_history: list[Any] | None, max_tokens: int) -> list[BaseMessage]:
    """The most recent turns of the conversation that fit ``max_tokens`` (approximately counted)."""
    if not chat_history or max_tokens <= 0:
        return []
    messages = [m for m in convert_to_messages(chat_history) if not isinstance(m, SystemMessage)]
    return trim_messages(
        messages, max_tokens=max_tokens, token_counter="approximate", strategy="last", start_on="human"
    )


def planning_messages(
    user_input: str,
    tasks: dict[str, TaskInfo],
    *,
    chat_history: list[Any] | None = None,
    files: list[str] | None = None,
    history_tokens: int = 2000,
    demonstrations: int = DEFAULT_K,
) -> list[BaseMessage]:
    """System specification and task list (static), then the demonstrations chosen for this request
    as past turns, the trimmed history, and the request."""
    messages: list[BaseMessage] = [SystemMessage(render_prompt("planning", tasks=format_task_list(tasks)))]
    for demo in demonstrations_for(user_input, tasks, demonstrations):
        messages.append(HumanMessage(demo["input"]))
        messages.append(AIMessage(json.dumps(demo["plan"], ensure_ascii=False)))
    messages.extend(trim_history(chat_history, history_tokens))
    messages.append(HumanMessage(_user_text(user_input, list(files or []))))
    return messages


# ---------------------------------------------------------------- JSON schema


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
        variants.append(
            {
                "type": "object",
                "properties": {
                    "task": {"type": "string", "enum": [info.name]},
                    "id": {"type": "integer"},
                    "dep": {"type": "array", "items": {"type": "integer"}},
                    "args": args,
                },
                "required": ["task", "id", "dep", "args"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": variants}


# ---------------------------------------------------------------- lenient parsing
# The one lenient JSON reader lives in hugginggpt/llm/json_text.py; ``find_json`` is re-exported.


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


# ---------------------------------------------------------------- structured output


def structured_runnable(llm: BaseChatModel, schema: dict[str, Any], mode: Structured) -> Any | None:
    """``llm`` constrained to ``schema``, or None when the model cannot do structured output."""
    if mode is False:
        return None
    try:
        return llm.with_structured_output(schema, method="json_schema", include_raw=True)
    except NotImplementedError:
        if mode is True:
            raise LLMError(f"{type(llm).__name__} does not support structured output") from None
        return None


class StructuredLLM:
    """An LLM constrained to one JSON schema: LangChain's ``with_structured_output(..., include_raw=True)``
    chain, whose ``ainvoke`` answers ``{"raw", "parsed", "parsing_error"}``."""

    def __init__(self, chain: Any):
        self.chain = chain

    async def ainvoke(self, messages: list[BaseMessage], config: RunnableConfig) -> dict[str, Any]:
        return await self.chain.ainvoke(messages, config)


class ConstrainedCache:
    """The LLM constrained to each schema, built once per agent: ``with_structured_output`` builds
    new pydantic models every time (milliseconds), and the same schemas recur run after run."""

    def __init__(self, llm: BaseChatModel, structured: Structured, size: int = 32):
        self.llm = llm
        self.structured = structured
        self.size = size
        self._entries: OrderedDict[Hashable, StructuredLLM | None] = OrderedDict()

    def serves(self, llm: BaseChatModel, structured: Structured) -> bool:
        """Whether this cache was built for ``llm`` in ``structured`` mode."""
        return self.llm is llm and self.structured == structured

    def get(self, schema: dict[str, Any] | Callable[[], dict[str, Any]],
            key: Hashable | None = None) -> StructuredLLM | None:
        """The constrained LLM for ``schema`` (None: the model has no structured output).

        With ``key`` (what the schema is built from), ``schema`` may be a function that builds it,
        called only on a miss; without, the schema's JSON is the key.
        """
        if key is None:
            key = json.dumps(schema, sort_keys=True)
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        chain = structured_runnable(self.llm, schema() if callable(schema) else schema, self.structured)
        entry = StructuredLLM(chain) if chain is not None else None
        self._entries[key] = entry
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return entry


def plan_schema_key(tasks: dict[str, TaskInfo]) -> Hashable:
    """What ``plan_schema(tasks)`` depends on, cheaper to compute than the schema itself."""
    return ("plan", tuple((t.name, t.in_table, t.args, tuple(t.choices.items())) for t in tasks.values()))


# ---------------------------------------------------------------- the stage


def _rejections(repairs: list[Repair]) -> list[str]:
    return [r["reason"] for r in repairs if r["reason"].startswith("rejected")]


class Planner:
    """Runs stage 1 for one request; a small object so the re-ask shares state with the first ask."""

    def __init__(self, llm: BaseChatModel, tasks: dict[str, TaskInfo], *, structured: Structured = "auto",
                 trace: Trace | None = None, request: str | None = None, constrained: ConstrainedCache | None = None):
        self.llm = llm
        self.tasks = tasks
        self.trace = trace
        self.request = request
        cache = constrained if constrained is not None and constrained.serves(llm, structured) else None
        cache = cache or ConstrainedCache(llm, structured, size=1)
        self.constrained = cache.get(lambda: plan_schema(tasks), plan_schema_key(tasks)) if tasks else None
        self.raw_outputs: list[str] = []

    async def _ask(self, messages: list[BaseMessage], config: RunnableConfig, stage: str) -> Any:
        """One LLM call; returns the parsed plan data, or raises PlanError with the reason."""
        started = time.perf_counter()
        try:
            if self.constrained is not None:
                answer = await self.constrained.ainvoke(messages, config)
                raw_text = content_text(answer.get("raw"))
                parsed = answer.get("parsed")
            else:
                message = await self.llm.ainvoke(messages, config)
                raw_text, parsed = content_text(message), None
        except (PlanError, LLMError):
            raise
        except Exception as exc:
            raise LLMError(f"planning: the LLM call failed: {type(exc).__name__}: {exc}") from exc
        if not raw_text and parsed is not None:
            raw_text = json.dumps(parsed, ensure_ascii=False, default=str)
        self.raw_outputs.append(raw_text)
        if self.trace is not None:
            self.trace.add_llm_call(stage, [m.model_dump() for m in messages], raw_text,
                                    seconds=round(time.perf_counter() - started, 6))
        return parsed if parsed is not None else parse_plan_text(raw_text)

    async def run(self, messages: list[BaseMessage], config: RunnableConfig) -> tuple[Plan, list[Repair]]:
        if not self.tasks:
            return Plan(), [{"task_id": None, "reason": "no tools available: answering directly"}]
        error: str | None = None
        best: tuple[Plan, list[Repair]] | None = None
        try:
            best = validate_plan(await self._ask(messages, config, "planning"), self.tasks, self.request)
            if _rejections(best[1]):
                error = "; ".join(_rejections(best[1]))
        except PlanError as exc:
            error = str(exc)
        if error is None and best is not None:
            return best
        reask = [*messages, AIMessage(self.raw_outputs[-1]), HumanMessage(render_prompt("planning_reask", error=error))]
        try:
            second = validate_plan(await self._ask(reask, config, "planning-reask"), self.tasks, self.request)
        except PlanError as exc:
            if best is None:
                raise PlanError(f"planning failed twice: {error}; then: {exc}") from None
            return best
        if best is None or len(_rejections(second[1])) <= len(_rejections(best[1])):
            return second[0], [{"task_id": None, "reason": f"re-asked after: {error}"}, *second[1]]
        return best


async def aplan_request(
    llm: BaseChatModel,
    tasks: dict[str, TaskInfo],
    user_input: str,
    *,
    chat_history: list[Any] | None = None,
    files: list[str] | None = None,
    history_tokens: int = 2000,
    structured: Structured = "auto",
    config: RunnableConfig | None = None,
    trace: Trace | None = None,
    constrained: ConstrainedCache | None = None,
) -> PlanResult:
    """Plan ``user_input`` with ``llm``: the plan, repairs, raw answers and token usage.

    ``constrained``: the agent's cache of constrained LLMs, so the plan schema's is built once.
    """
    usage = UsageCounter()
    config = ensure_config(config)
    callbacks = config.get("callbacks")
    if callbacks is None:
        callbacks = [usage]
    elif isinstance(callbacks, list):
        callbacks = [*callbacks, usage]
    else:
        callbacks = callbacks.copy()
        callbacks.add_handler(usage, inherit=True)
    config = {**config, "callbacks": callbacks}
    messages = planning_messages(
        user_input, tasks, chat_history=chat_history, files=files, history_tokens=history_tokens
    )
    planner = Planner(llm, tasks, structured=structured, trace=trace,
                      request=_user_text(user_input, list(files or [])), constrained=constrained)
    plan, repairs = await planner.run(messages, config)
    return PlanResult(
        plan=plan,
        repairs=repairs,
        raw_outputs=planner.raw_outputs,
        usage=usage.as_dict(),
        prompt=[{"role": m.type, "content": content_text(m)} for m in messages],
        structured=planner.constrained is not None,
    )
