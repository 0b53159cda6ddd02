"""Stage 1, task planning: turn a request into a validated plan with one LLM call (two at most).

The prompt (``prompt.py``) is answered under the plan's JSON schema when the model supports
structured output (``parse.py``, ``llm/structured.py``); otherwise the text is read leniently.
The plan goes through the passes (``passes.py``); a plan with a rejected task, or an empty plan for a
request that gives files, is re-asked once, with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.demonstrations import DEFAULT_K
from hugginggpt.agent.plan.model import MAX_TASKS, Plan, Repair
from hugginggpt.agent.plan.parse import parse_plan_text, plan_schema, plan_schema_key, without_unfinished_task
from hugginggpt.agent.plan.passes import is_rejection, validate_plan
from hugginggpt.agent.plan.prompt import planning_messages, user_text
from hugginggpt.agent.trace import Trace, UsageCounter
from hugginggpt.errors import PlanError
from hugginggpt.llm.content import content_text, cut_off, finish_reason
from hugginggpt.llm.structured import ConstrainedCache, Structured
from hugginggpt.llm.token_limits import bounded, token_limit
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import TaskSpec


@dataclass
class PlanResult:
    """What planning produced: the plan, the repairs made, and the LLM's raw answers."""

    plan: Plan
    repairs: list[Repair] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    prompt: list[dict[str, str]] = field(default_factory=list)
    structured: bool = False


#: A plan's answer tokens: the JSON of ``MAX_TASKS`` steps (words, task name, id, argument names), plus the
#: texts its arguments copy from the request, which are at most as many tokens as the request has characters.
PLAN_BASE_TOKENS = 64
PLAN_TOKENS_PER_TASK = 48
PLAN_TOKENS_ROUNDING = 256


def plan_max_tokens(request: str) -> int:
    """The most tokens a plan for ``request`` can need (rounded up to a multiple of 256, so few bounds recur)."""
    need = PLAN_BASE_TOKENS + PLAN_TOKENS_PER_TASK * MAX_TASKS + len(request)
    return -(-need // PLAN_TOKENS_ROUNDING) * PLAN_TOKENS_ROUNDING


def _rejections(repairs: list[Repair]) -> list[str]:
    return [r["reason"] for r in repairs if is_rejection(r)]


class Planner:
    """Runs stage 1 for one request; a small object so the re-ask shares state with the first ask."""

    def __init__(self, llm: BaseChatModel, tasks: dict[str, TaskSpec], *, structured: Structured = "auto",
                 trace: Trace | None = None, request: str | None = None, constrained: ConstrainedCache | None = None,
                 files: list[str] | None = None):
        self.llm = llm
        self.tasks = tasks
        self.trace = trace
        self.request = request
        named = PlanContext.of(tasks, request).files.values() if request is not None else ()
        self.files = list(dict.fromkeys([*(files or []), *(f for kind in named for f in kind)]))
        self.max_tokens = plan_max_tokens(request or "")
        cache = constrained if constrained is not None and constrained.serves(llm, structured) else None
        cache = cache or ConstrainedCache(llm, structured, size=1)
        self.constrained = (cache.get(lambda: plan_schema(tasks), plan_schema_key(tasks), max_tokens=self.max_tokens)
                            if tasks else None)
        self.raw_outputs: list[str] = []

    async def _ask(self, messages: list[BaseMessage], config: RunnableConfig, stage: str) -> tuple[Any, list[Repair]]:
        """One LLM call: the parsed plan data and what reading it changed (a task that the token limit
        cut off is dropped); raises PlanError with the reason when there is no plan in the answer."""
        llm = self.constrained if self.constrained is not None else bounded(self.llm, self.max_tokens)
        reply = await acall_llm(stage, llm.ainvoke(messages, config), [m.model_dump() for m in messages],
                                trace=self.trace, max_tokens=token_limit(bounded(self.llm, self.max_tokens)))
        message, parsed = reply.message, reply.parsed
        raw_text = reply.text
        if not raw_text and parsed is not None:
            raw_text = json.dumps(parsed, ensure_ascii=False, default=str)
        self.raw_outputs.append(raw_text)
        data = parsed if parsed is not None else parse_plan_text(raw_text)
        if not cut_off(message):
            return data, []
        # Both readers (LangChain's partial-JSON parser and ours) close a cut-off answer with ends of their own.
        data, dropped = without_unfinished_task(raw_text, data)
        limit = token_limit(bounded(self.llm, self.max_tokens))
        reason = ("the planner's answer stopped repeating itself" if finish_reason(message) == "repetition" else
                  "the planner's answer stopped at its token limit" + (f" (max_tokens={limit})" if limit else ""))
        if dropped and not (data.get("tasks") if isinstance(data, dict) else data):
            raise PlanError(f"{reason} before it finished one task")
        return data, [{"task_id": None, "reason": f"{reason}: its unfinished last task is dropped" if dropped else reason, "pass": "read"}]

    def _validate(self, asked: tuple[Any, list[Repair]]) -> tuple[Plan, list[Repair]]:
        data, read_repairs = asked
        plan, repairs = validate_plan(data, self.tasks, self.request)
        return plan, [*read_repairs, *repairs]

    async def run(self, messages: list[BaseMessage], config: RunnableConfig) -> tuple[Plan, list[Repair]]:
        if not self.tasks:
            return Plan(), [{"task_id": None, "reason": "no tools available: answering directly", "pass": "planner"}]
        error: str | None = None
        best: tuple[Plan, list[Repair]] | None = None
        try:
            best = self._validate(await self._ask(messages, config, "planning"))
            if _rejections(best[1]):
                error = "; ".join(_rejections(best[1]))
            elif not best[0].tasks and self.files:
                error = (f"the plan is empty, but the request gives {', '.join(repr(f) for f in self.files[:5])}: a "
                         "question or request about a file is answered by a task that runs on it ([] is only for "
                         "requests no task serves)")
        except PlanError as exc:
            error = str(exc)
        if error is None and best is not None:
            return best
        reask = [*messages, AIMessage(self.raw_outputs[-1]), HumanMessage(render_prompt("planning_reask", error=error))]
        try:
            second = self._validate(await self._ask(reask, config, "planning-reask"))
        except PlanError as exc:
            if best is None:
                raise PlanError(f"planning failed twice: {error}; then: {exc}") from None
            return best
        if best is None or len(_rejections(second[1])) <= len(_rejections(best[1])):
            return second[0], [{"task_id": None, "reason": f"re-asked after: {error}", "pass": "planner"}, *second[1]]
        return best


async def aplan_request(
    llm: BaseChatModel,
    tasks: dict[str, TaskSpec],
    user_input: str,
    *,
    chat_history: list[Any] | None = None,
    files: list[str] | None = None,
    history_tokens: int = 2000,
    structured: Structured = "auto",
    config: RunnableConfig | None = None,
    trace: Trace | None = None,
    constrained: ConstrainedCache | None = None,
    demonstrations: int = DEFAULT_K,
) -> PlanResult:
    """Plan ``user_input`` with ``llm``: the plan, repairs, raw answers and token usage.

    ``constrained``: the agent's cache of constrained LLMs, so the plan schema's is built once.
    ``demonstrations``: how many few-shot examples are chosen for this request, after the pool's
    fixed ones that every request sees (``agent/plan/demonstrations.py``).
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
        user_input, tasks, chat_history=chat_history, files=files, history_tokens=history_tokens,
        demonstrations=demonstrations,
    )
    planner = Planner(llm, tasks, structured=structured, trace=trace,
                      request=user_text(user_input, files), constrained=constrained, files=files)
    plan, repairs = await planner.run(messages, config)
    return PlanResult(
        plan=plan,
        repairs=repairs,
        raw_outputs=planner.raw_outputs,
        usage=usage.as_dict(),
        prompt=[{"role": m.type, "content": content_text(m)} for m in messages],
        structured=planner.constrained is not None,
    )
