"""Stage 4, response generation: the LLM explains the results, and a post-check keeps it honest.

The prompt gives the request, the plan, the chosen models and each task's (summarized) prediction,
and asks for a direct answer first, then the process in the first person with full file paths.
HuggingGPT's answers sometimes named files that were never produced (JARVIS issue #75), so every
file path in the answer is checked against the real inputs and outputs, and a note corrects it.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.agent.plan import Plan
from hugginggpt.agent.planning import content_text, trim_history
from hugginggpt.agent.trace import Trace
from hugginggpt.errors import LLMError
from hugginggpt.prompts import load_prompt, render_prompt
from hugginggpt.tools.results import FILE_KINDS, summarize

MEDIA_SUFFIXES = (
    "png jpg jpeg gif bmp webp tif tiff wav mp3 flac ogg m4a aac mp4 avi mov mkv webm csv json txt pdf npy"
).split()
_PATH = re.compile(
    r"(?<![\w/.:-])((?:[A-Za-z]:\\|~?/|\./|\.\./)?[\w.\-/\\]*[\w\-]\.(?:" + "|".join(MEDIA_SUFFIXES) + r"))\b",
    re.IGNORECASE,
)
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://\S+", re.IGNORECASE)


#: ``<resource>-N`` as it stands in a plan's arguments; shown to the LLM as "(output of task N)".
RESOURCE_MENTION = re.compile(r"<resource>-(\d+)")


def predictions_text(plan: Plan, selections: dict[int, dict[str, Any]], outcomes: dict[int, dict[str, Any]]) -> str:
    """One compact block per task: what ran, on which model, and what it produced or why not."""
    lines = []
    for step in plan.tasks:
        outcome = outcomes.get(step.id, {"status": "not run"})
        model = selections.get(step.id, {}).get("model") or "default model"
        args = RESOURCE_MENTION.sub(lambda m: f"(output of task {m.group(1)})", json.dumps(step.args, ensure_ascii=False))
        head = f"Task {step.id} {step.task} args={args} model={model}"
        if outcome.get("status") == "ok":
            lines.append(f"{head}\n  prediction: {summarize(outcome['result'])}")
        else:
            lines.append(f"{head}\n  {outcome.get('status')}: {outcome.get('error')}")
    return "\n".join(lines) or "(no tasks were run)"


def response_messages(user_input: str, plan: Plan, selections: dict[int, dict[str, Any]],
                      outcomes: dict[int, dict[str, Any]], *, chat_history: list[Any] | None = None,
                      history_tokens: int = 2000) -> list[BaseMessage]:
    """The response prompt; with an empty plan it is a plain chat turn (a direct answer)."""
    if not plan.tasks:
        return [*trim_history(chat_history, history_tokens), HumanMessage(user_input)]
    data = render_prompt("response_data", input=user_input, predictions=predictions_text(plan, selections, outcomes))
    return [SystemMessage(load_prompt("response")), HumanMessage(data)]


def known_files(outcomes: dict[int, dict[str, Any]], inputs: list[str | Path]) -> set[str]:
    """Every file the answer may mention: generated outputs and the user's inputs."""
    files = {str(p) for p in inputs}
    for outcome in outcomes.values():
        for kind in FILE_KINDS:
            value = (outcome.get("result") or {}).get(kind)
            if value:
                files.add(str(value))
    return files


def unknown_paths(answer: str, files: set[str]) -> list[str]:
    """File paths the answer mentions that are neither an input nor a generated file."""
    allowed = {str(Path(f)) for f in files} | {Path(f).name for f in files}
    text = _URL.sub(" ", answer)
    found: list[str] = []
    for match in _PATH.finditer(text):
        mention = match.group(1).rstrip(".")
        if mention not in allowed and str(Path(mention)) not in allowed and mention not in found:
            found.append(mention)
    return found


def correction_note(paths: list[str], files: set[str]) -> str:
    real = ", ".join(sorted(files)) or "none"
    return (f"\n\nNote: {', '.join(paths)} {'was' if len(paths) == 1 else 'were'} not produced by any task "
            f"and {'is' if len(paths) == 1 else 'are'} not an input file; the actual files are: {real}.")


def fallback_answer(outcomes: dict[int, dict[str, Any]]) -> str:
    """A plain account of the results, for when the LLM answers nothing: the user still learns what
    ran, what it produced (files by path) and what failed."""
    if not outcomes:
        return "The model gave no answer, and no tasks were run."
    lines = ["The model gave no answer; here is what the tasks did:"]
    for task_id, outcome in sorted(outcomes.items()):
        head = f"- task {task_id} ({outcome.get('task')})"
        if outcome.get("status") == "ok":
            lines.append(f"{head}: {summarize(outcome.get('result') or {}) or 'no output'}")
        else:
            lines.append(f"{head} {outcome.get('status')}: {outcome.get('error')}")
    return "\n".join(lines)


async def arespond(llm: BaseChatModel, messages: list[BaseMessage], files: set[str], config: RunnableConfig,
                   trace: Trace | None = None, *,
                   outcomes: dict[int, dict[str, Any]] | None = None) -> tuple[str, list[str]]:
    """The answer (with a correction note when it names files that do not exist) and those names.

    An empty answer is replaced by ``fallback_answer(outcomes)`` (recorded in the trace as
    ``response_fallback``).
    """
    started = time.perf_counter()
    try:
        answer = content_text(await llm.ainvoke(messages, config)).strip()
    except Exception as exc:
        raise LLMError(f"response: the LLM call failed: {type(exc).__name__}: {exc}") from exc
    if trace is not None:
        trace.add_llm_call("response", [m.model_dump() for m in messages], answer,
                           seconds=round(time.perf_counter() - started, 6))
    if not answer:
        answer = fallback_answer(outcomes or {})
        if trace is not None:
            trace.set("response_fallback", answer)
    invented = unknown_paths(answer, files)
    if invented:
        answer += correction_note(invented, files)
    return answer, invented
