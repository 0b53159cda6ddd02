"""HuggingGPT's critic: an LLM judges whether a plan serves the request (yes / no, with a reason).

The paper evaluates planning by asking a strong LLM as a critic; ``hugginggpt compare --critic``
does the same for every agent's plan, and the planner may use it once as a self-check. The prompt
(``prompts/critic.md``) holds the available tasks and positive and negative demonstrations; the
request and the plan come last, so the static part is a reusable prefix. An answer that is not
JSON, or whose choice is not yes or no, is *no verdict* (``Verdict.choice is None``), never an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.plan.prompt import format_task_list
from hugginggpt.errors import HuggingGPTError, error_line
from hugginggpt.llm.content import content_text
from hugginggpt.llm.json_text import find_json
from hugginggpt.llm.structured import ConstrainedCache
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import TaskSpec

CHOICES = ("yes", "no")

VERDICT_SCHEMA: dict[str, Any] = {
    "title": "verdict",
    "description": "Whether the plan serves the request.",
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": list(CHOICES)}, "reason": {"type": "string"}},
    "required": ["choice", "reason"],
}


@dataclass
class Verdict:
    """The critic's answer: ``choice`` is "yes", "no", or None (no verdict: unreadable answer)."""

    choice: str | None
    reason: str = ""
    raw: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def critic_messages(request: str, plan: Sequence[Any], tasks: dict[str, TaskSpec]) -> list[BaseMessage]:
    """The critic prompt: static instructions, task list and demonstrations first, then request and plan."""
    system = render_prompt("critic", tasks=format_task_list(tasks))
    shown = json.dumps(list(plan), ensure_ascii=False)
    return [SystemMessage(system), HumanMessage(f"Request: {request}\nPlan: {shown}\nAnswer:")]


def parse_verdict(text: Any) -> Verdict:
    """The verdict in a critic's answer (a JSON object, or text around one); no verdict when unreadable."""
    raw = content_text(text) if not isinstance(text, dict) else json.dumps(text)
    value = text if isinstance(text, dict) else None
    if value is None:
        try:
            value = find_json(raw, lambda v: isinstance(v, dict) and "choice" in v)
        except ValueError:
            return Verdict(None, "no JSON object with a choice in the answer", raw)
    choice = value.get("choice")
    reason = value.get("reason")
    reason = reason if isinstance(reason, str) else ("" if reason is None else json.dumps(reason))
    normalised = choice.strip().strip(".!").lower() if isinstance(choice, str) else None
    if normalised not in CHOICES:
        return Verdict(None, f"choice {choice!r} is not yes or no", raw)
    return Verdict(normalised, reason, raw)


async def ajudge_plan(llm: Any, request: str, plan: Sequence[Any], tasks: dict[str, TaskSpec], *,
                      constrained: ConstrainedCache | None = None,
                      config: RunnableConfig | None = None) -> Verdict:
    """Ask ``llm`` (constrained to the verdict schema when it can be) whether ``plan`` serves ``request``.

    A failing LLM call is a no-verdict too, with the error as the reason: judging must not stop a run.
    """
    messages = critic_messages(request, plan, tasks)
    started = time.perf_counter()
    try:
        cache = constrained if constrained is not None else ConstrainedCache(llm, "auto", size=1)
        judge = cache.get(VERDICT_SCHEMA, key="critic-verdict") or llm
        reply = await acall_llm("critic", judge.ainvoke(messages, config or {}), messages)
        verdict = parse_verdict(reply.parsed if isinstance(reply.parsed, dict) else reply.text)
        verdict.raw = reply.text or verdict.raw
    except HuggingGPTError as exc:  # a broken critic gives no verdict, reported apart
        verdict = Verdict(None, error_line(exc))
    verdict.seconds = round(time.perf_counter() - started, 6)
    return verdict
