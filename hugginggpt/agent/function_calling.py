"""FunctionCallingAgent: the LLM sees the task tools through ``bind_tools`` and calls them itself.

Built on ``langchain.agents.create_agent``; one middleware (``RunGuard``) enforces the run's limits
(a tool call may only take the time left of the budget), records every tool call as a plan node,
answers repeated identical calls from the earlier result, turns tool errors into observations,
and clips what the LLM sees of a tool's output (the full envelope stays in ``results``). Parallel
calls of one model turn run concurrently (LangGraph's tool node runs them in a thread pool).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from hugginggpt.agent.tool_loop import AgentRun, ToolLoopAgent
from hugginggpt.agent.tool_trace import (
    MAX_OBSERVATION_CHARS,
    CallTimeout,
    ToolStep,
    call_with_deadline,
    clip_observation,
    describe_error,
    message_text,
    repeat_note,
    stopped_message,
    tool_error,
)
from hugginggpt.errors import LLMError

SYSTEM_PROMPT = """You are HuggingGPT: you solve the user's request by calling AI task tools \
(Hugging Face models). Call a tool whenever a step needs a model; pass files as the exact paths \
the user gave or a tool returned, and text as plain text. Independent steps may be called in \
parallel. Your tool calls are numbered from 0 in the order you make them; an argument may name \
the output of call N as <resource>-N. When done, answer the user directly: say what you did and \
name every produced file by its exact path. Never invent a path or a result a tool did not return."""


class RunGuard(AgentMiddleware):
    """Limits, plan recording and repeated-call detection for one run of the graph."""

    def __init__(self, run: AgentRun):
        super().__init__()
        self.run = run
        # Parallel calls of a turn are admitted (numbered, checked) in the model's order, so plan
        # ids do not depend on thread timing; only the admission is serialised, not the work.
        self._turn: list[str] = []
        self._admitted: set[str] = set()
        self._order = threading.Condition()

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        budget = self.run.budget
        if budget.stop_reason is None and budget.take_llm_call():
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        text = stopped_message(budget.stop_reason or "stopped", self.run.tools, message_text(last) if last else "")
        return {"jump_to": "end", "messages": [AIMessage(content=text)]}

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        started = time.perf_counter()
        try:
            response = handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:
            raise LLMError(f"the controller LLM failed: {describe_error(error)}") from error
        seconds = round(time.perf_counter() - started, 6)
        message = next((m for m in response.result if isinstance(m, AIMessage)), None)
        calls = [{"name": c["name"], "args": c["args"]} for c in (message.tool_calls if message else [])]
        text = message_text(message) if message else ""
        self.run.trace.add_llm_call("agent", request.messages, message, getattr(message, "usage_metadata", None),
                                    seconds)
        self.run.emit("llm_step", step=self.run.budget.llm_calls, text=text, tool_calls=calls, seconds=seconds)
        with self._order:
            self._turn = [c.get("id") or "" for c in (message.tool_calls if message else [])]
            self._admitted = set()
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        call_id = request.tool_call.get("id") or ""
        with self._order:
            earlier_ids = self._turn[: self._turn.index(call_id)] if call_id in self._turn else []
            self._order.wait_for(lambda: self._admitted.issuperset(earlier_ids), timeout=10)
        try:
            admitted = self._admit(request)
        finally:
            with self._order:
                self._admitted.add(call_id)
                self._order.notify_all()
        if isinstance(admitted, ToolMessage):
            return _clipped(admitted)
        request, step = admitted
        return _clipped(self._execute(request, step, handler))

    def _admit(self, request: Any) -> tuple[Any, ToolStep] | ToolMessage:
        """Open the call's plan node, or answer it without running (a repeat, or a limit hit)."""
        call = request.tool_call
        budget, tools = self.run.budget, self.run.tools
        name, call_id = call["name"], call.get("id") or ""
        args = tools.resolve_references(call.get("args") or {})
        if args != call.get("args"):
            request = request.override(tool_call={**call, "args": args})
        earlier = tools.earlier_call(name, args)
        if earlier is not None:
            budget.note_repeat(name)
            return ToolMessage(repeat_note(earlier), tool_call_id=call_id, name=name)
        if budget.stop_reason is not None or not budget.take_step():
            return ToolMessage(f"not run: {budget.stop_reason}", tool_call_id=call_id, name=name, status="error")
        return request, tools.start(name, args)

    def _execute(self, request: Any, step: ToolStep, handler: Callable[[Any], Any]) -> Any:
        """Run an admitted call; a tool error becomes an error observation."""
        tools, name, call_id = self.run.tools, step.task, request.tool_call.get("id") or ""
        try:
            result = call_with_deadline(lambda: handler(request), self.run.budget.remaining_s)
        except GraphBubbleUp:
            raise
        except CallTimeout as timeout:
            self.run.budget.run_out_of_time()
            tools.fail(step, tool_error(name, timeout))
            return ToolMessage(f"error: {step.error}", tool_call_id=call_id, name=name, status="error")
        except Exception as error:
            tools.fail(step, tool_error(name, error))
            return ToolMessage(f"error: {step.error}", tool_call_id=call_id, name=name, status="error")
        if not isinstance(result, ToolMessage):  # a Command: nothing to observe
            tools.finish(step, {})
        elif result.status == "error":
            tools.fail(step, tool_error(name, message_text(result)))
        else:
            tools.finish(step, result.artifact if isinstance(result.artifact, dict) else result.content)
        return result


def _clipped(result: Any) -> Any:
    """A tool message as the LLM should see it: content clipped (the artifact is left whole)."""
    if not isinstance(result, ToolMessage):
        return result
    text = message_text(result)
    if len(text) <= MAX_OBSERVATION_CHARS:
        return result
    return result.model_copy(update={"content": clip_observation(text)})


class FunctionCallingAgent(ToolLoopAgent):
    """Native tool calling: the LLM picks tools (several per turn when it can) until it answers."""

    agent_name = "function-calling"

    def _loop(self, run: AgentRun) -> str:
        graph = create_agent(self.llm, self.tools, system_prompt=SYSTEM_PROMPT, middleware=[RunGuard(run)],
                             name=self.agent_name)
        messages = [*run.request.chat_history, HumanMessage(run.request.user_text())]
        # Last resort only: the guard stops the run long before (model + tools node per step).
        recursion_limit = 2 * (self.limits.max_llm_calls + self.limits.max_steps) + 10
        state = graph.invoke({"messages": messages}, {**run.config, "recursion_limit": recursion_limit})
        final = state["messages"][-1]
        return message_text(final)
