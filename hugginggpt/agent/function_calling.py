"""FunctionCallingAgent: the LLM sees the task tools through ``bind_tools`` and calls them itself.

Built on ``langchain.agents.create_agent``; one middleware (``RunGuard``) stops the model turns at
the run's limits and passes every tool call through the tool-call step the ReAct agent uses too
(``ToolLoopAgent.call_tool``: limits, plan recording, repeats, errors as observations, clipping).
Parallel calls of one model turn run concurrently (LangGraph's async tool node gathers them).
Every model turn must call a tool (``create_agent``'s ``ToolStrategy`` binds the tools with
``tool_choice="any"``): a task tool for the next step, or ``final_answer`` to end the run with the
answer, as smolagents' ToolCallingAgent does. A turn that answers in plain text anyway (a model or
provider that does not honour the choice) still ends the run with that text.
The system prompt is ``prompts/function_calling.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field

from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.observations import stopped_message
from hugginggpt.agent.run import AgentRun
from hugginggpt.agent.tool_loop import ToolLoopAgent
from hugginggpt.agent.tool_trace import ToolTrace
from hugginggpt.llm.content import content_text
from hugginggpt.llm.token_limits import token_limit
from hugginggpt.prompts import load_prompt


class final_answer(BaseModel):  # noqa: N801 - the tool's name as the model sees it
    """Give the user the final answer, once every step of the request has run."""

    answer: str = Field(description="the answer, in the language of the request, naming every file the tools produced")


class RunGuard(AgentMiddleware):
    """The run's limits for the graph's model turns, and its tool calls through the agents' one
    tool-call step (``ToolLoopAgent.call_tool``)."""

    def __init__(self, agent: ToolLoopAgent, run: AgentRun, calls: ToolTrace):
        super().__init__()
        self.agent, self.run, self.calls = agent, run, calls

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        budget = self.run.budget
        if budget.stop_reason is None and budget.take_llm_call():
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        text = stopped_message(budget.stop_reason or "stopped", self.calls, content_text(last) if last else "")
        return {"jump_to": "end", "messages": [AIMessage(content=text)]}

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        response: ModelResponse | None = None

        async def model_turn() -> AIMessage | None:
            nonlocal response
            response = await handler(request)
            return next((m for m in response.result if isinstance(m, AIMessage)), None)

        reply = await acall_llm("agent", model_turn(), request.messages, trace=self.run.trace,
                                max_tokens=token_limit(self.agent.turn_llm))
        await self.agent.report_turn(self.run, reply)
        return response

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        async def invoke(call: dict[str, Any]) -> Any:
            return await handler(request.override(tool_call={**request.tool_call, "args": call["args"]}))

        return await self.agent.call_tool(self.run, self.calls, request.tool_call, invoke)


class FunctionCallingAgent(ToolLoopAgent):
    """Native tool calling: the LLM picks tools (several per turn when it can) until it answers."""

    agent_name = "function-calling"

    async def _loop(self, run: AgentRun, calls: ToolTrace) -> str:
        graph = create_agent(self.turn_llm, self.tools, system_prompt=load_prompt("function_calling"),
                             middleware=[RunGuard(self, run, calls)], name=self.agent_name,
                             response_format=ToolStrategy(final_answer, tool_message_content="answered"))
        messages = [*run.request.chat_history, HumanMessage(run.request.user_text())]
        # Last resort only: the guard stops the run long before (model + tools node per step).
        recursion_limit = 2 * (self.limits.max_llm_calls + self.limits.max_steps) + 10
        state = await graph.ainvoke({"messages": messages}, {**run.config, "recursion_limit": recursion_limit})
        answer = state.get("structured_response")
        return answer.answer if isinstance(answer, final_answer) else content_text(state["messages"][-1])
