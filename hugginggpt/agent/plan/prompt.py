"""The planning prompt: HuggingGPT's specification of the plan format and the available tasks, one
per line (static: the same for every request, so llama.cpp reuses its prefix state), then few-shot
demonstrations chosen for this request (``agent/plan/demonstrations.py``), the trimmed chat history, and
the request."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from hugginggpt.agent.plan.demonstrations import DEFAULT_K, select_demonstrations
from hugginggpt.agent.plan.parse import written_plan
from hugginggpt.agent.request import AgentRequest, trim_history
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


def demonstrations_for(user_input: str, tasks: dict[str, TaskSpec], k: int = DEFAULT_K) -> list[dict[str, Any]]:
    """The ``k`` usable demonstrations most similar to the request (BM25 over our pool)."""
    return select_demonstrations(user_input, tasks, k)


def planning_messages(
    user_input: str,
    tasks: dict[str, TaskSpec],
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
        messages.append(AIMessage(json.dumps(written_plan(demo["plan"]), ensure_ascii=False)))
    messages.extend(trim_history(chat_history, history_tokens))
    messages.append(HumanMessage(user_text(user_input, files)))
    return messages


def user_text(user_input: str, files: list[str] | None) -> str:
    """The request as the planner reads it (``AgentRequest.user_text``: the user's files listed after it)."""
    return AgentRequest(input=user_input, files=[str(f) for f in files or []]).user_text()
