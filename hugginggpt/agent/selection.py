"""Stage 2, model selection: pick one model per task, with one LLM call for the whole plan.

Candidates come from the catalog, ranked by downloads (as the HuggingGPT paper says; the reference
code sorted by likes). No LLM call is spent where there is no choice: a task whose model the user
named (``catalog.preferred``, e.g. ``--local-model TASK=DIR``) runs on it, and a task with a single
candidate the executor can run under its policy (offline: the models on disk) runs on that one.
The LLM is asked only about tasks with a real choice, all in one batched call; an answer naming a
model outside the list falls back to the top candidate, with the reason recorded, so a
hallucinated model id never reaches an executor.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.plan import Plan
from hugginggpt.agent.trace import Trace
from hugginggpt.errors import HuggingGPTError, error_line
from hugginggpt.llm.json_text import find_json
from hugginggpt.llm.structured import ConstrainedCache, Structured
from hugginggpt.llm.token_limits import bounded, selection_max_tokens, token_limit
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import TaskSpec

Selection = dict[str, Any]  # {"model": str, "reason": str}


def candidate_line(card: Any) -> str:
    """One candidate as HuggingGPT shows it: ``{"model_id", "metadata", "description"}``."""
    metadata: dict[str, Any] = {"downloads": getattr(card, "downloads", 0), "likes": getattr(card, "likes", 0)}
    if getattr(card, "local", False):
        metadata["local"] = True
    tags = [t for t in (getattr(card, "tags", None) or []) if ":" not in t][:5]
    if tags:
        metadata["tags"] = tags
    description = " ".join((getattr(card, "description", "") or "").split())[:200]
    return json.dumps({"model_id": card.id, "metadata": metadata, "description": description}, ensure_ascii=False)


def _ranked(cards: list[Any]) -> list[Any]:
    return sorted(cards, key=lambda c: getattr(c, "downloads", 0) or 0, reverse=True)


def selection_prompt(user_input: str, plan: Plan, choices: dict[int, list[Any]]) -> str:
    blocks = []
    for task_id, cards in choices.items():
        task = plan.by_id[task_id]
        lines = "\n".join(candidate_line(c) for c in cards)
        blocks.append(f"Task {task_id}: {task.task} with args {json.dumps(task.args, ensure_ascii=False)}\n"
                      f"Candidates:\n{lines}")
    return render_prompt("selection", input=user_input, tasks="\n\n".join(blocks))


def selection_schema(choices: dict[int, list[Any]]) -> dict[str, Any]:
    """One property per task id, each an object whose ``id`` is an enum of that task's candidates."""
    properties = {
        str(task_id): {
            "type": "object",
            "properties": {"id": {"type": "string", "enum": [c.id for c in cards]}, "reason": {"type": "string"}},
            "required": ["id", "reason"],
            "additionalProperties": False,
        }
        for task_id, cards in choices.items()
    }
    return {
        "title": "model_selection",
        "description": "The chosen model for each task id.",
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _pick(answer: Any, task_id: int, cards: list[Any]) -> Selection:
    """The LLM's choice for one task if it is a candidate, else the top candidate and why."""
    top = cards[0].id
    entry = answer.get(str(task_id), answer.get(task_id)) if isinstance(answer, dict) else None
    if isinstance(entry, str):
        entry = {"id": entry}
    if not isinstance(entry, dict) or not entry.get("id"):
        return {"model": top, "reason": f"the LLM gave no choice for task {task_id}; using the most downloaded candidate"}
    chosen = str(entry["id"]).strip()
    if chosen not in {c.id for c in cards}:
        return {"model": top, "reason": f"the LLM chose {chosen!r}, which is not a candidate; using the most downloaded candidate"}
    return {"model": chosen, "reason": str(entry.get("reason") or "chosen by the LLM")}


class ModelSelector:
    """Runs stage 2: catalog candidates, then one LLM call for the tasks with a real choice.

    ``constrained``: a cache shared between runs (an agent keeps one); default: one for this selector.
    """

    def __init__(self, llm: BaseChatModel, catalog: Any, *, top_k: int = 5, structured: Structured = "auto",
                 trace: Trace | None = None, constrained: ConstrainedCache | None = None,
                 runnable: Callable[[str, str], bool] | None = None):
        self.llm = llm
        self.runnable = runnable
        self.catalog = catalog
        self.top_k = top_k
        self.structured = structured
        self.trace = trace
        self.unrunnable: set[str] = set()  # tasks none of whose candidates the executor can run
        reusable = constrained is not None and constrained.serves(llm, structured)
        self.constrained = constrained if reusable else ConstrainedCache(llm, structured)

    def candidates(self, plan: Plan, tasks: dict[str, TaskSpec]) -> dict[int, list[Any]]:
        """Top-k candidates per table task of the plan (other tools get no selection)."""
        if self.catalog is None:
            return {}
        by_task: dict[str, list[Any]] = {}  # a plan often repeats a task: ask the catalog once per task
        found = {}
        for step in plan.tasks:
            if tasks.get(step.task) is not None and tasks[step.task].in_table:
                if step.task not in by_task:
                    by_task[step.task] = self._runnable_candidates(step.task)
                found[step.id] = list(by_task[step.task])
        return found

    def _runnable_candidates(self, task: str) -> list[Any]:
        """Top-k by downloads among the models the task's tool can run (JARVIS offered models whose
        endpoint was down, #217); when none can, the plain top-k, so execution reports why."""
        ranked = _ranked(list(self.catalog.candidates(task, k=10**6 if self.runnable else self.top_k)))
        if self.runnable is not None:
            usable = [card for card in ranked if self.runnable(task, card.id)]
            if not usable:
                self.unrunnable.add(task)
            ranked = usable or ranked
        return ranked[: self.top_k]

    def named(self, task: str) -> Any:
        """The model the user named for ``task`` (None when none, or when the executor cannot run it)."""
        preferred = getattr(self.catalog, "preferred", None)
        card = preferred(task) if preferred is not None else None
        if card is None or (self.runnable is not None and not self.runnable(task, card.id)):
            return None
        return card

    async def select(self, user_input: str, plan: Plan, tasks: dict[str, TaskSpec],
                     config: RunnableConfig) -> dict[int, Selection]:
        """``{task id: {"model", "reason"}}`` for each table task that has at least one candidate."""
        found = self.candidates(plan, tasks)
        selections: dict[int, Selection] = {}
        choices: dict[int, list[Any]] = {}
        for task_id, cards in found.items():
            named = self.named(plan.by_id[task_id].task)
            if named is not None:
                selections[task_id] = {"model": named.id, "reason": "the model the user named for this task"}
            elif len(cards) == 1:
                selections[task_id] = {"model": cards[0].id, "reason": "the only candidate for this task"}
            elif cards and plan.by_id[task_id].task in self.unrunnable:  # no choice worth an LLM call
                selections[task_id] = {"model": cards[0].id, "reason": "no candidate can run under the execution "
                                       "policy; trying the most downloaded one (execution says why it fails)"}
            elif cards:
                choices[task_id] = cards
        if choices:
            answer = await self._ask(user_input, plan, choices, config)
            for task_id, cards in choices.items():
                selections[task_id] = _pick(answer, task_id, cards)
        return dict(sorted(selections.items()))

    async def _ask(self, user_input: str, plan: Plan, choices: dict[int, list[Any]], config: RunnableConfig) -> Any:
        """The LLM's answer as data; on a failed call or unreadable text, an error dict (``_pick`` then
        falls back to the top candidates)."""
        prompt = selection_prompt(user_input, plan, choices)
        messages = [HumanMessage(prompt)]
        max_tokens = selection_max_tokens(len(choices))  # an id and a short reason per task
        try:
            llm = self.constrained.get(selection_schema(choices), max_tokens=max_tokens)
            llm = llm if llm is not None else bounded(self.llm, max_tokens)
            reply = await acall_llm("selection", llm.ainvoke(messages, config), prompt, trace=self.trace,
                                    max_tokens=token_limit(bounded(self.llm, max_tokens)))
            if reply.parsed is not None:
                return reply.parsed
            return find_json(reply.text, lambda value: isinstance(value, dict))
        except (HuggingGPTError, ValueError) as exc:  # no usable answer: the top candidates
            return {"error": error_line(exc)}

