"""What the step-by-step agents (function calling, ReAct) share on top of the run lifecycle
(``hugginggpt.agent.run``): their limits, one LLM turn, and one tool call — references resolved,
repeats answered from the earlier result, the step and time budget enforced, the call recorded as a
plan node, and every failure returned as an error ``ToolMessage`` — so each agent only reads its
model's turns and decides the next step (``_loop``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.limits import RunLimits
from hugginggpt.agent.observations import clip_observation, describe_error, repeat_note, tool_error
from hugginggpt.agent.response import correction_note, fallback_answer, known_files, unknown_paths
from hugginggpt.agent.run import Agent, AgentRun
from hugginggpt.agent.tool_trace import ToolTrace
from hugginggpt.errors import LLMError
from hugginggpt.llm.content import content_text, finish_reason
from hugginggpt.llm.token_limits import TURN_MAX_TOKENS, bounded, token_limit

#: Runs a tool call (``{"name", "args", "id", "type": "tool_call"}``) and returns its ToolMessage.
CallTool = Callable[[dict[str, Any]], Awaitable[Any]]


class ToolLoopAgent(Agent):
    """Base of the agents that call tools step by step; subclasses implement ``_loop``."""

    def __init__(self, llm: BaseChatModel, tools: Sequence[BaseTool] | None = None, *, max_steps: int = 10,
                 max_llm_calls: int = 12, time_budget_s: float = 300, workspace_root: str | Path | None = None,
                 max_repeats: int = 2):
        if tools is None:
            from hugginggpt.tools import build_tools

            tools = build_tools()
        self.llm = llm
        self.tools = list(tools)
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique, got {names}")
        self.limits = RunLimits(max_steps=max_steps, max_llm_calls=max_llm_calls,
                                time_budget_s=time_budget_s, max_repeats=max_repeats)
        self.workspace_root = workspace_root

    async def _loop(self, run: AgentRun, calls: ToolTrace) -> str:
        """Drive the LLM and the tools; return the final answer text."""
        raise NotImplementedError

    async def _steps(self, run: AgentRun) -> AsyncIterator[dict[str, Any]]:
        calls = ToolTrace()
        try:
            answer = await self._loop(run, calls)
        finally:
            run.trace.set("plan", calls.plan)
            run.trace.set("results", calls.results)
        results = calls.results
        if not answer.strip():  # the user still learns what ran and what it produced
            answer = fallback_answer(results)
            run.trace.set("response_fallback", answer)
        files = known_files(results, run.request.files)
        invented = unknown_paths(answer, files)
        if invented:
            answer += correction_note(invented, files)
        run.trace.set("invented_paths", invented)
        await run.emit(ev.RESPONSE, output=answer, invented_paths=invented)
        yield {"plan": calls.plan, "results": results, "output": answer}

    @property
    def turn_llm(self) -> BaseChatModel:
        """The controller as each turn asks it: at most ``TURN_MAX_TOKENS`` answer tokens."""
        return bounded(self.llm, TURN_MAX_TOKENS)

    async def ask(self, run: AgentRun, llm: Any, messages: list[BaseMessage]) -> Any:
        """One LLM turn (``llm``: ``turn_llm``, perhaps bound to more), recorded in the trace and reported
        as an ``llm_step`` event."""
        started = time.perf_counter()
        try:
            reply = await llm.ainvoke(messages, config=run.config)
        except Exception as error:
            raise LLMError(f"the controller LLM failed: {describe_error(error)}") from error
        await self.record_turn(run, messages, reply, round(time.perf_counter() - started, 6))
        return reply

    async def record_turn(self, run: AgentRun, messages: list[Any], reply: Any, seconds: float) -> None:
        """The turn in the trace (with its token bound), its ``llm_step`` event, and an ``llm_cut_off``
        event when its answer was cut at the bound or stopped repeating itself."""
        text = content_text(reply)
        calls = [{"name": c["name"], "args": c["args"]} for c in getattr(reply, "tool_calls", None) or []]
        run.trace.add_llm_call("agent", list(messages), reply if calls else text,
                               getattr(reply, "usage_metadata", None), seconds, finish_reason(reply),
                               max_tokens=token_limit(self.turn_llm))
        await run.emit(ev.LLM_STEP, step=run.budget.llm_calls, text=text, tool_calls=calls, seconds=seconds)
        await run.report_cut_offs()

    @staticmethod
    async def call_tool(run: AgentRun, calls: ToolTrace, call: dict[str, Any], invoke: CallTool) -> Any:
        """One tool call of a step, as the LLM should see its outcome (a ToolMessage, content clipped).

        Admission happens before the first ``await``, so parallel calls of one turn are numbered in
        the model's order.
        """
        name, call_id = call["name"], call.get("id") or ""
        args = calls.resolve_references(call.get("args") or {})
        earlier = calls.earlier_call(name, args)
        if earlier is not None:
            run.budget.note_repeat(name)
            return ToolMessage(repeat_note(earlier), tool_call_id=call_id, name=name)
        if run.budget.stop_reason is not None or not run.budget.take_step():
            return ToolMessage(f"not run: {run.budget.stop_reason}", tool_call_id=call_id, name=name, status="error")
        step = calls.start(name, args)
        await _report(run, step)
        try:
            async with asyncio.timeout(run.budget.remaining_s):
                reply = await invoke({**call, "args": args, "id": call_id, "type": "tool_call"})
        except TimeoutError:
            run.budget.run_out_of_time()
            calls.fail(step, f"{name}: timed out after {run.budget.limits.time_budget_s:g} s (the run's time budget)")
        except Exception as error:  # a tool that raises instead of answering with an error message
            if _bubbles_up(error):
                raise
            calls.fail(step, tool_error(name, error))
        else:
            if not isinstance(reply, ToolMessage):  # a Command (LangGraph): nothing to observe
                calls.finish(step, {})
                await _report(run, step)
                return reply
            if reply.status == "error":
                calls.fail(step, tool_error(name, content_text(reply)))
            else:
                calls.finish(step, reply.artifact if isinstance(reply.artifact, dict) else content_text(reply))
                await _report(run, step)
                text = content_text(reply)  # the LLM sees a clipped text; the envelope stays whole
                clipped = clip_observation(text)
                return reply if clipped == text else reply.model_copy(update={"content": clipped})
        await _report(run, step)
        return ToolMessage(f"error: {step.error}", tool_call_id=call_id, name=name, status="error")


async def _report(run: AgentRun, step: Any) -> None:
    name, fields = step.event()
    await run.emit(name, **fields)


def _bubbles_up(error: BaseException) -> bool:
    """LangGraph's control-flow exceptions (interrupts) pass through the agent untouched."""
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - langgraph comes with langchain
        return False
    return isinstance(error, GraphBubbleUp)
