"""THE tool-call policy of every agent: one call of one tool, under a deadline, reported one way.

The global-plan scheduler runs each planned task through ``invoke_tool``, and the ReAct and
function-calling agents each call their model makes. It emits ``task_start``, awaits the tool under
its deadline, reads what the tool answered (a result envelope, a ``ToolMessage``, text), and emits
``task_end`` or ``task_failed``. A timeout, an exception or an error ``ToolMessage`` is a failed
``Outcome`` with one error line that names the tool (``tool_error``); LangGraph's control flow
(``bubbles_up``: an interrupt) passes through untouched. What the model is shown of a call, and what
the trace keeps, are made from the ``Outcome`` by the caller.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langchain_core.messages import ToolMessage

from hugginggpt.agent import events as ev
from hugginggpt.agent.llm_call import bubbles_up
from hugginggpt.errors import error_line
from hugginggpt.llm.content import content_text


class Emits(Protocol):
    """Where a call's stage events go (an ``AgentRun``, the ``Scheduler``)."""

    async def emit(self, name: str, **fields: Any) -> Any: ...


@dataclass
class ToolCall:
    """One call of one tool, as ``invoke_tool`` runs and reports it."""

    id: int
    """The call's number in the run (the plan task's id, the tool-loop step's)."""
    task: str
    """The tool's name."""
    invoke: Callable[[dict[str, Any]], Awaitable[Any]]
    """Runs the tool on its arguments and returns what it answered."""
    args: dict[str, Any] | Callable[[], dict[str, Any]]
    """The arguments, or how to make them (``<resource>-N`` substituted): a failure there fails the
    call before it starts."""
    shown_args: dict[str, Any] | None = None
    """The arguments as the events show them (default: ``args``)."""
    dep: list[int] = field(default_factory=list)
    model: str | None = None


@dataclass
class Outcome:
    """How one tool call ended."""

    task: str
    status: Literal["ok", "failed"]
    result: dict[str, Any] | None = None
    """The result envelope (a call that succeeded)."""
    error: str | None = None
    """One line naming the tool and the cause (a call that failed)."""
    error_type: str | None = None
    """The exception's type name, when the tool raised (``TimeoutError`` for a deadline)."""
    seconds: float = 0.0
    reply: Any = None
    """What the tool answered, as it answered it (the tool-loop agents return it to their model)."""
    timed_out: bool = False

    def record(self) -> dict[str, Any]:
        """The outcome as the agents' ``results`` hold it: ``{"task", "status", "result", "error"[, "error_type"]}``."""
        record = {"task": self.task, "status": self.status, "result": self.result, "error": self.error}
        if self.error_type:
            record["error_type"] = self.error_type
        return record


def tool_error(tool: str, error: BaseException | str) -> str:
    """The error line of a failed call (``errors.error_line``), naming the tool once."""
    text = error_line(error)
    return text if text.startswith(f"{tool}:") else f"{tool}: {text}"


def as_envelope(output: Any) -> dict[str, Any]:
    """A tool's output as a result envelope: dicts as they are, JSON objects parsed, text as ``text``."""
    if isinstance(output, dict):
        return output
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            return {"text": output}
        return parsed if isinstance(parsed, dict) else {"text": output}
    return {"data": output}


async def invoke_tool(run: Emits, call: ToolCall, timeout: float, *, timeout_label: str | None = None) -> Outcome:
    """Run ``call`` within ``timeout`` seconds and report it: ``task_start``, then ``task_end`` or
    ``task_failed`` (a call whose arguments cannot be made fails without starting).

    ``timeout_label``: how the error line of a timeout names the limit (default ``"<timeout> s"``).
    """
    started = time.perf_counter()
    try:
        args = call.args() if callable(call.args) else call.args
        await run.emit(ev.TASK_START, id=call.id, task=call.task, args=args if call.shown_args is None else call.shown_args,
                       dep=list(call.dep), model=call.model)
        async with asyncio.timeout(timeout):  # no extra task per call, unlike wait_for
            reply = await call.invoke(args)
    except TimeoutError:
        outcome = Outcome(call.task, "failed", error=f"{call.task}: timed out after {timeout_label or f'{timeout:g} s'}",
                          error_type="TimeoutError", timed_out=True)
    except Exception as error:  # noqa: BLE001 - a failing tool is an outcome, never the run's end
        if bubbles_up(error):
            raise
        outcome = Outcome(call.task, "failed", error=tool_error(call.task, error), error_type=type(error).__name__)
    else:
        outcome = read_reply(call.task, reply)
    outcome.seconds = round(time.perf_counter() - started, 6)
    if outcome.status == "ok":
        await run.emit(ev.TASK_END, id=call.id, task=call.task, result=outcome.result, seconds=outcome.seconds)
    else:
        await run.emit(ev.TASK_FAILED, id=call.id, task=call.task, error=outcome.error, seconds=outcome.seconds)
    return outcome


def read_reply(task: str, reply: Any) -> Outcome:
    """What a tool answered, as an ``Outcome``: an envelope as it is; a ``ToolMessage`` by its status
    and its artifact (else its text, a JSON object read as the envelope); a LangGraph ``Command``
    (nothing to observe) as an empty result; anything else as text."""
    if isinstance(reply, ToolMessage):
        if reply.status == "error":
            return Outcome(task, "failed", error=tool_error(task, content_text(reply)), reply=reply)
        artifact = reply.artifact
        return Outcome(task, "ok", result=artifact if isinstance(artifact, dict) else as_envelope(content_text(reply)),
                       reply=reply)
    if isinstance(reply, dict):
        return Outcome(task, "ok", result=reply, reply=reply)
    if _is_command(reply):
        return Outcome(task, "ok", result={}, reply=reply)
    return Outcome(task, "ok", result={"text": str(reply)}, reply=reply)


def _is_command(reply: Any) -> bool:
    try:
        from langgraph.types import Command
    except ImportError:  # pragma: no cover - langgraph comes with langchain
        return False
    return isinstance(reply, Command)
