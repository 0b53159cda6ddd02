"""Stage 4, response generation: the LLM explains what succeeded; the rest is written from the outcomes.

The LLM is shown the request and the tasks that produced something (model and summarized
prediction), and asks for a direct answer first, then the process in the first person with full
file paths. What failed or was skipped is not left to the LLM (a small model asked about a failed
task answered with a similarity score no task had computed): ``failure_report`` writes it from the
outcomes themselves (what failed, why, and what the user can do), and when nothing succeeded the
LLM is not asked at all. Every file path and every decimal number in the LLM's answer is checked
against the real inputs, outputs and predictions (``answer_check``), and a note corrects it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.agent.answer_check import Answer, checked_answer, generated_files
from hugginggpt.agent.llm_call import LLMReply, astream_llm
from hugginggpt.agent.plan import Plan
from hugginggpt.agent.request import trim_history
from hugginggpt.agent.trace import Trace
from hugginggpt.llm.content import content_text
from hugginggpt.llm.token_limits import RESPONSE_MAX_TOKENS, bounded, token_limit
from hugginggpt.prompts import load_prompt, render_prompt
from hugginggpt.tools.resources.refs import CANONICAL_REF
from hugginggpt.tools.results import clip_values, summarize

#: Arguments longer than this are cut in the response prompt (with a marker saying how much).
PROMPT_ARG_CHARS = 2000


def predictions_text(plan: Plan, selections: dict[int, dict[str, Any]], outcomes: dict[int, dict[str, Any]]) -> str:
    """One compact block per task: what ran, on which model, and what it produced or why not."""
    lines = []
    for step in plan.tasks:
        outcome = outcomes.get(step.id, {"status": "not run"})
        model = model_label(selections.get(step.id, {}).get("model")) or "default model"
        args = json.dumps(clip_values(step.args, PROMPT_ARG_CHARS), ensure_ascii=False)
        args = CANONICAL_REF.sub(lambda m: f"(output of task {m.group('id')})", args)
        head = f"Task {step.id} {step.task} args={args} model={model}"
        if outcome.get("status") == "ok":
            lines.append(f"{head}\n  prediction: {summarize(outcome['result'])}")
        else:
            lines.append(f"{head}\n  {outcome.get('status')}: {outcome.get('error')}")
    return "\n".join(lines) or "(no tasks were run)"


def model_label(model: str | None) -> str | None:
    """How the response prompt names a model: a Hub id as it is, a file or folder on this machine by
    its name (a full path there reads like a file the run made, and the answer then lists it)."""
    if not model:
        return None
    text = str(model).removeprefix("gguf:")
    if text.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", text):
        return re.split(r"[\\/]", text.rstrip("\\/"))[-1] or text
    return text


def response_messages(user_input: str, plan: Plan, selections: dict[int, dict[str, Any]],
                      outcomes: dict[int, dict[str, Any]], *, chat_history: list[Any] | None = None,
                      history_tokens: int = 2000) -> list[BaseMessage]:
    """The response prompt; with an empty plan it is a plain chat turn (a direct answer).

    Only the tasks that succeeded are shown (``failure_report`` covers the others). The static
    instructions come first, the request and predictions last, so llama.cpp reuses the prefix.
    """
    if not plan.tasks:
        return [*trim_history(chat_history, history_tokens), HumanMessage(user_input)]
    succeeded = Plan(tasks=[step for step in plan.tasks if outcomes.get(step.id, {}).get("status") == "ok"])
    made = sorted(generated_files(outcomes))
    data = render_prompt("response_data", input=user_input,
                         predictions=predictions_text(succeeded, selections, outcomes),
                         files="\n".join(f"- {path}" for path in made) or "none")
    return [SystemMessage(load_prompt("response")), HumanMessage(data)]


#: What the user can do when a task had no model it could run (CLI flags, as the README shows them).
_REMEDY = ("To run {task}, name a model folder on this machine with --local-model {task}=DIR, point "
           "--endpoint URL at an inference server, or set HF_TOKEN for Hugging Face's hosted inference")
_AVAILABILITY_ERRORS = frozenset({"ModelLoadError", "RemoteInferenceError"})  # where a model runs: the remedy applies


def failure_report(outcomes: dict[int, dict[str, Any]]) -> str:
    """What failed and was skipped, why, and what the user can do: written from the outcomes alone.

    Empty when every task succeeded. Deterministic: no LLM writes it, so it cannot state a result
    that no task produced.
    """
    lines = []
    for task_id, outcome in sorted(outcomes.items()):
        status, task = outcome.get("status"), outcome.get("task") or "?"
        if status == "ok":
            continue
        error = " ".join(str(outcome.get("error") or "no reason was recorded").split())
        if status == "skipped":
            cause = error.removeprefix("skipped: ")
            lines.append(f"- Task {task_id} ({task}) was skipped: it needs the output of {cause}.")
            continue
        line = f"- Task {task_id} ({task}) {status or 'did not run'}: {error.rstrip('.')}."
        if outcome.get("error_type") in _AVAILABILITY_ERRORS:
            line += " " + _REMEDY.format(task=task) + "."
        lines.append(line)
    return "\n".join(lines)


def nothing_succeeded_answer(outcomes: dict[int, dict[str, Any]]) -> str:
    """The whole answer when tasks were planned and none produced a result (no LLM is asked)."""
    report = failure_report(outcomes)
    return "I could not complete the request: no task produced a result.\n" + report if report else (
        "I could not complete the request: no task produced a result.")


class _Stripped:
    """Pieces of a text as they come, less the text's leading and trailing whitespace: the pieces
    ``feed`` lets through add up to the whole text's ``strip()``."""

    def __init__(self) -> None:
        self.started, self.held = False, ""

    def feed(self, piece: str) -> str:
        if not self.started:
            piece = piece.lstrip()
            self.started = bool(piece)
        text = self.held + piece
        body = text.rstrip()
        self.held = text[len(body):]
        return body


async def astream_response(llm: BaseChatModel, messages: list[BaseMessage], files: set[str], config: RunnableConfig,
                           trace: Trace | None = None, *,
                           outcomes: dict[int, dict[str, Any]] | None = None) -> AsyncIterator[str | Answer]:
    """The answer as the controller writes it: its pieces (``str``), then the whole ``Answer``, which
    starts with the pieces put together (what follows them: notes and the failure report).

    With ``outcomes`` (the run's tasks): when none succeeded, the answer is
    ``nothing_succeeded_answer`` and the LLM is not called (``Answer.skipped``); otherwise the LLM's
    answer about the successes (at most ``RESPONSE_MAX_TOKENS`` tokens, streamed when the model
    streams; the call recorded in ``trace``), checked against the prompt (``checked_answer``: an empty
    answer replaced by the fallback, file paths and decimal numbers that no task produced noted), then
    ``failure_report``.
    """
    outcomes = outcomes or {}
    if outcomes and not any(o.get("status") == "ok" for o in outcomes.values()):
        yield Answer(nothing_succeeded_answer(outcomes), skipped="skipped: no task produced a result")
        return
    llm = bounded(llm, RESPONSE_MAX_TOKENS)
    stripped, reply = _Stripped(), None
    async for item in astream_llm("response", llm.astream(messages, config), messages, trace=trace,
                                  max_tokens=token_limit(llm)):
        if isinstance(item, LLMReply):
            reply = item
        elif piece := stripped.feed(item):
            yield piece
    shown = "\n".join(content_text(m) for m in messages) if outcomes else None
    answer = checked_answer(reply.text.strip() if reply is not None else "", files, shown, outcomes)
    report = failure_report(outcomes)
    if report:
        answer.text += "\n\nNot done:\n" + report
    yield answer


async def arespond(llm: BaseChatModel, messages: list[BaseMessage], files: set[str], config: RunnableConfig,
                   trace: Trace | None = None, *,
                   outcomes: dict[int, dict[str, Any]] | None = None) -> tuple[str, list[str]]:
    """The whole answer of ``astream_response`` and the file names it invented."""
    async for item in astream_response(llm, messages, files, config, trace, outcomes=outcomes):
        if isinstance(item, Answer):
            return item.text, item.invented
    raise AssertionError("astream_response ends with its Answer")  # pragma: no cover
