"""What the step-by-step agents (function calling, ReAct) share on top of the run lifecycle
(``hugginggpt.agent.run``): their limits, one LLM turn, and one tool call — references resolved,
repeats answered from the earlier result, the step and time budget enforced, the call recorded as a
plan node, and every failure returned as an error ``ToolMessage`` — so each agent only reads its
model's turns and decides the next step (``_loop``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.answer_check import checked_answer, known_files
from hugginggpt.agent.limits import RunLimits
from hugginggpt.agent.llm_call import LLMReply, acall_llm
from hugginggpt.agent.observations import clip_observation, repeat_note
from hugginggpt.agent.run import Agent, AgentRun
from hugginggpt.agent.tool_call import ToolCall, invoke_tool
from hugginggpt.agent.tool_trace import ToolTrace
from hugginggpt.llm.content import content_text
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
        async with run.stage("execution") as stage:
            try:
                answer = await self._loop(run, calls)
            finally:  # a run that fails half-way keeps the calls it made
                stage.record(plan=calls.plan, results=calls.results)
        results = calls.results
        async with run.stage("response") as stage:
            evidence = _evidence(run, calls) if calls.steps else None
            checked = checked_answer(answer, known_files(results, run.request.files), evidence, results)
            stage.answered(checked)
        yield {"plan": calls.plan, "results": results, "output": checked.text}

    @property
    def turn_llm(self) -> BaseChatModel:
        """The controller as each turn asks it: at most ``TURN_MAX_TOKENS`` answer tokens."""
        return bounded(self.llm, TURN_MAX_TOKENS)

    async def ask(self, run: AgentRun, llm: Any, messages: list[BaseMessage]) -> LLMReply:
        """One LLM turn (``llm``: ``turn_llm``, perhaps bound to more; ``acall_llm``: timed, traced with its
        token bound, failing as ``LLMError``), reported as events (``report_turn``)."""
        reply = await acall_llm("agent", llm.ainvoke(messages, config=run.config), messages, trace=run.trace,
                                max_tokens=token_limit(self.turn_llm))
        await self.report_turn(run, reply)
        return reply

    @staticmethod
    async def report_turn(run: AgentRun, reply: LLMReply) -> None:
        """The ``llm_step`` event of one model turn (its text and the tools it calls), and an ``llm_cut_off``
        event when its answer was cut at the bound or stopped repeating itself."""
        calls = [{"name": c["name"], "args": c["args"]} for c in getattr(reply.message, "tool_calls", None) or []]
        await run.emit(ev.LLM_STEP, step=run.budget.llm_calls, text=reply.text, tool_calls=calls, seconds=reply.seconds)
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
        if earlier is not None:  # the same call again: the earlier result, not a second run
            run.budget.note_repeat(name)
            if earlier.ended is not None:  # a parallel call of the same turn still running: wait for it
                await asyncio.shield(earlier.ended)
            return ToolMessage(repeat_note(earlier), tool_call_id=call_id, name=name)
        if run.budget.stop_reason is not None or not run.budget.take_step():
            return ToolMessage(f"not run: {run.budget.stop_reason}", tool_call_id=call_id, name=name, status="error")
        step = calls.start(name, args)
        step.ended = asyncio.get_running_loop().create_future()
        try:
            return await ToolLoopAgent._run_call(run, calls, step, call, invoke)
        finally:
            if not step.ended.done():
                step.ended.set_result(None)

    @staticmethod
    async def _run_call(run: AgentRun, calls: ToolTrace, step: Any, call: dict[str, Any], invoke: CallTool) -> Any:
        """Run an admitted call through the tool-call policy; what the model is shown of it."""
        name, call_id = call["name"], call.get("id") or ""
        args = step.args
        budget = run.budget

        async def run_tool(resolved: dict[str, Any]) -> Any:
            return await invoke({**call, "args": resolved, "id": call_id, "type": "tool_call"})

        outcome = await invoke_tool(run, ToolCall(step.id, name, run_tool, args, shown_args=step.recorded_args,
                                                  dep=step.dep), budget.remaining_s,
                                    timeout_label=f"{budget.limits.time_budget_s:g} s (the run's time budget)")
        if outcome.timed_out:
            budget.run_out_of_time()
        if outcome.status == "failed":
            calls.fail(step, outcome.error or name)
            return ToolMessage(step.observation, tool_call_id=call_id, name=name, status="error")
        reply = outcome.reply
        if not isinstance(reply, ToolMessage):  # a Command (LangGraph): nothing to observe
            calls.finish(step, outcome.result)
            return reply
        # The model sees the tool's text, clipped (the envelope stays whole in the results), the same
        # text when it repeats the call (``repeat_note``).
        text = content_text(reply)
        shown = clip_observation(text)
        calls.finish(step, outcome.result, shown)
        return reply if shown == text else reply.model_copy(update={"content": shown})


def _evidence(run: AgentRun, calls: ToolTrace) -> str:
    """What the answer was written from: the request, why the run stopped (if it did), what the
    model was shown of each call, and the results themselves."""
    shown = [run.request.user_text(), run.budget.stop_reason or "", *(step.observation for step in calls.steps)]
    return "\n".join([*shown, json.dumps(calls.results, ensure_ascii=False, default=str)])
