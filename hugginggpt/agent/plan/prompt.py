"""The planning prompt: HuggingGPT's specification of the plan format and the available tasks, one
per line (static: the same for every request, so llama.cpp reuses its prefix state), then few-shot
demonstrations chosen for this request (``agent/plan/demonstrations.py``), the trimmed chat history, and
the request."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from hugginggpt.agent.plan.demonstrations import DEFAULT_K, select_demonstrations
from hugginggpt.agent.plan.outputs import delivered_kinds
from hugginggpt.agent.plan.parse import written_plan
from hugginggpt.agent.request import AgentRequest, trim_history
from hugginggpt.llm.content import content_text
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import TaskSpec


def format_task_list(tasks: dict[str, TaskSpec]) -> str:
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


def demonstrations_for(user_input: str, tasks: dict[str, TaskSpec], k: int = DEFAULT_K,
                       inputs: str | None = None) -> list[dict[str, Any]]:
    """The block for the kinds of input ``inputs`` names (``request_context``; else ``user_input``), then
    the ``k`` usable demonstrations most similar to the request (BM25 over our pool)."""
    return select_demonstrations(user_input, tasks, k, inputs)


def request_context(user_input: str, files: list[str] | None, history: list[BaseMessage]) -> str:
    """What a plan may read, as text: the conversation so far (``history``, already trimmed), then the
    request with the user's files listed after it. The plan's schema and the block of demonstrations are
    both read from it, so a picture attached without a word, or one an earlier turn made, counts."""
    text = user_text(user_input, files)
    before = "\n".join(content_text(m) for m in history)
    return f"{before}\n{text}" if before else text


STEP_FORMAT = '{"step": WHAT, "task": TASK, "id": N, "args": {ARG: VALUE}}'
WANTS_RULE = ('- "wants" first: what the user wants to get back, from "text" (an answer, label, transcript, '
              'translation, story...), "image", "audio" (speech, sound, music), "video"; [] when nothing is asked. '
              'Each kind in "wants" is made by a task of the plan.\n')


def system_prompt(tasks: dict[str, TaskSpec], *, wants: bool = False) -> str:
    """The planning prompt's system message: the rules, the answer's format and the task list (static)."""
    if wants:
        return render_prompt("planning", tasks=format_task_list(tasks), answer="a JSON object",
                             format=f'{{"wants": [KIND], "tasks": [{STEP_FORMAT}]}}', wants_rule=WANTS_RULE)
    return render_prompt("planning", tasks=format_task_list(tasks), answer="a JSON array",
                         format=f"[{STEP_FORMAT}]", wants_rule="")


def demonstration_answer(demo: dict[str, Any], tasks: dict[str, TaskSpec], *, wants: bool = False) -> str:
    """A demonstration's plan as the planner is asked to write it (with its wanted kinds when ``wants``)."""
    steps = written_plan(demo["plan"])
    if not wants:
        return json.dumps(steps, ensure_ascii=False)
    kinds = demo.get("wants")
    if kinds is None:
        kinds = delivered_kinds(demo["plan"], tasks)
    return json.dumps({"wants": kinds, "tasks": steps}, ensure_ascii=False)


def planning_messages(
    user_input: str,
    tasks: dict[str, TaskSpec],
    *,
    chat_history: list[Any] | None = None,
    files: list[str] | None = None,
    history_tokens: int = 2000,
    demonstrations: int = DEFAULT_K,
    wants: bool = False,
) -> list[BaseMessage]:
    """System specification and task list (static), then the demonstrations chosen for this request
    (the block for the kinds of input it gives: its words, its files and the conversation so far) as
    past turns, the trimmed history, and the request. With ``wants``, answers open with the kinds
    of result the user wants back (``outputs.py``)."""
    messages: list[BaseMessage] = [SystemMessage(system_prompt(tasks, wants=wants))]
    history = trim_history(chat_history, history_tokens)
    inputs = request_context(user_input, files, history)
    for demo in demonstrations_for(user_input, tasks, demonstrations, inputs):
        messages.append(HumanMessage(demo["input"]))
        messages.append(AIMessage(demonstration_answer(demo, tasks, wants=wants)))
    messages.extend(history)
    messages.append(HumanMessage(user_text(user_input, files)))
    return messages


def user_text(user_input: str, files: list[str] | None) -> str:
    """The request as the planner reads it (``AgentRequest.user_text``: the user's files listed after it)."""
    return AgentRequest(input=user_input, files=[str(f) for f in files or []]).user_text()
