"""A scripted stand-in for the controller LLM, so the notebooks run in seconds in CI without a model.

``ReplayPlanner`` knows one plan per request (for TaskBench: the ground truth) and answers in
whichever protocol the agent asking speaks: a JSON plan for the global-plan agent, one
``Thought / Action / Action Input`` step per turn for ReAct, one tool call per turn for function
calling. Every agent therefore gets the same plan, so what differs between them in a comparison is
the harness path and the cost of each protocol (LLM calls, prompt sizes), not model quality.

It is test scaffolding for the notebooks, not part of the library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

FINAL_ANSWER = "I ran every step of the plan."


def approx_tokens(text: str) -> int:
    """A rough token count (4 characters each): enough to compare prompt sizes between protocols."""
    return max(1, len(text) // 4)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else json.dumps(message.content)


class ReplayPlanner(BaseChatModel):
    """Replays ``plans[request]`` (nodes ``{"task", "id", "dep", "args"}``) in any agent's protocol."""

    plans: dict[str, list[dict[str, Any]]]
    tool_calling: bool = False  # set on the copy ``bind_tools`` returns
    tool_schema_chars: int = 0  # the bound tools' JSON schemas, which a real API counts as prompt

    @classmethod
    def from_samples(cls, samples: Sequence[Any], mapping: Any) -> "ReplayPlanner":
        """One plan per TaskBench sample: its ground-truth graph in our plan format."""
        return cls(plans={s.request: mapping.sample_to_plan(s.nodes) for s in samples})

    @property
    def _llm_type(self) -> str:
        return "replay-planner"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ReplayPlanner":
        """Function calling: the same plans, answered as tool calls."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schemas = json.dumps([convert_to_openai_tool(tool) for tool in tools])
        return self.model_copy(update={"tool_calling": True, "tool_schema_chars": len(schemas)})

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        """Like a model without a JSON mode: the planner falls back to reading the JSON from text."""
        raise NotImplementedError("the replay planner answers in plain text")

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        position, plan = self._find_request(messages)
        if self.tool_calling:
            reply = self._tool_call_turn(plan, _turns_since(messages, position))
        elif any(isinstance(m, SystemMessage) and "Action Input:" in _text(m) for m in messages):
            reply = AIMessage(self._react_turn(plan, _turns_since(messages, position)))
        else:
            reply = AIMessage(json.dumps(plan))
        prompt = approx_tokens("".join(_text(m) for m in messages)) + self.tool_schema_chars // 4
        answer = approx_tokens(_text(reply) + (json.dumps(reply.tool_calls) if reply.tool_calls else ""))
        usage = {"input_tokens": prompt, "output_tokens": answer, "total_tokens": prompt + answer}
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(update={"usage_metadata": usage}))])

    def _find_request(self, messages: Sequence[BaseMessage]) -> tuple[int, list[dict[str, Any]]]:
        """The latest user message that is a known request (later ones are observations or re-asks)."""
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            if isinstance(message, HumanMessage):
                plan = _plan_for(self.plans, _text(message))
                if plan is not None:
                    return position, plan
        raise ValueError("the replay planner has no plan for this request")

    @staticmethod
    def _react_turn(plan: list[dict[str, Any]], done: int) -> str:
        if done >= len(plan):
            return f"Thought: I now know the final answer\nFinal Answer: {FINAL_ANSWER}"
        node = plan[done]
        return (f"Thought: step {done} of the plan\nAction: {node['task']}\n"
                f"Action Input: {json.dumps(node['args'], ensure_ascii=False)}")

    @staticmethod
    def _tool_call_turn(plan: list[dict[str, Any]], done: int) -> AIMessage:
        if done >= len(plan):
            return AIMessage(FINAL_ANSWER)
        node = plan[done]
        call = {"name": node["task"], "args": node["args"], "id": f"replay-{done}", "type": "tool_call"}
        return AIMessage("", tool_calls=[call])


def _plan_for(plans: Mapping[str, list[dict[str, Any]]], text: str) -> list[dict[str, Any]] | None:
    """The plan of a request, also when the agent appended a note (e.g. the files given)."""
    if text in plans:
        return plans[text]
    return next((plan for request, plan in plans.items() if text.startswith(request)), None)


def _turns_since(messages: Sequence[BaseMessage], position: int) -> int:
    """How many answers the model already gave for the request at ``position``."""
    return sum(1 for m in messages[position + 1:] if isinstance(m, AIMessage))
