"""The agent tool's progress: its stage events, each reported to the client as one short line."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hugginggpt.errors import HuggingGPTError, error_line

#: How a call reports progress: (step number, one line).
Progress = Callable[[int, str], Awaitable[None]]


async def run_agent(agent: Any, request: dict[str, Any], progress: Progress | None) -> dict[str, Any]:
    """The agent's output; with ``progress``, through its stage events, each reported as one line."""
    if progress is None:
        return await agent.ainvoke(request)
    from hugginggpt.agent.events import FINAL, RESPONSE_DELTA

    final, step, writing = None, 0, False
    async for event in agent.astream_stage_events(request):
        if event.get("event") == FINAL:
            final = event.get("output")
            continue
        if event.get("event") == RESPONSE_DELTA:  # the answer's pieces: said once, not one notification each
            if writing:
                continue
            writing = True
        step += 1
        await progress(step, stage_line(event))
    if not isinstance(final, dict):
        raise HuggingGPTError("the agent stopped without a final output")
    return final


def stage_line(event: dict[str, Any]) -> str:
    """A stage event as one short line (``task 1 text-to-speech: done``)."""
    from hugginggpt.agent import events

    name = event.get("event")
    task = f"task {event.get('id')} {event.get('task')}"
    if name == events.PLAN:
        return f"plan: {', '.join(str(step.get('task')) for step in event.get('plan') or []) or 'no tasks'}"
    if name == events.SELECTION:
        return f"models chosen for {len(event.get('selections') or {})} task(s)"
    if name == events.TASK_START:
        return f"{task}: started" + (f" on {event['model']}" if event.get("model") else "")
    if name == events.TASK_END:
        return f"{task}: done"
    if name == events.TASK_FAILED:
        return f"{task}: failed: {error_line(str(event.get('error')))}"
    if name == events.TASK_SKIPPED:
        return f"{task}: skipped: {event.get('reason')}"
    if name == events.LLM_STEP:
        return f"controller turn {event.get('step')}"
    if name == events.RESPONSE_DELTA:
        return "writing the answer"
    if name == events.RESPONSE:
        return "answer written"
    return str(name)
