"""ReActAgent: Thought / Action / Action Input / Observation ... Final Answer, as plain text.

For controller LLMs without native tool calling (small local models). The model is stopped before
it can invent an observation (``stop=["\\nObservation:"]``); its action input is read leniently
(code fences, single quotes, trailing commas, a bare string for a one-argument tool). Whatever
cannot be read goes back to the model as an error observation, bounded by the step limit.
"""

from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

from hugginggpt.agent.tool_loop import AgentRun, ToolLoopAgent
from hugginggpt.agent.tool_trace import (
    CallTimeout,
    call_with_deadline,
    clip_observation,
    describe_error,
    message_text,
    repeat_note,
    stopped_message,
    tool_args_help,
    tool_error,
)
from hugginggpt.errors import LLMError
from hugginggpt.prompts import render_prompt

STOP = ["\nObservation:"]

_ACTION = re.compile(
    r"Action\s*\d*\s*:[ \t]*(?P<tool>[^\n]*?)[ \t]*\n+[ \t]*Action\s*\d*\s*Input\s*\d*\s*:(?P<input>.*)",
    re.DOTALL | re.IGNORECASE)
_FINAL = re.compile(r"Final\s*Answer\s*:(?P<answer>.*)", re.DOTALL | re.IGNORECASE)
_INPUT_END = re.compile(r"\n\s*(?:Observation|Thought|Final\s*Answer)\s*:", re.IGNORECASE)
_FENCE = re.compile(r"^```[\w-]*\s*\n?(?P<body>.*?)\n?```$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_JSON_WORDS = {"true": "True", "false": "False", "null": "None"}


class ReActParseError(ValueError):
    """The model's step could not be read; the message is fed back to it as the observation."""


@dataclass
class Action:
    tool: BaseTool
    args: dict[str, Any]


@dataclass
class FinalAnswer:
    answer: str


def parse_step(text: str, tools: dict[str, BaseTool]) -> Action | FinalAnswer:
    """Read one model turn as an action or the final answer (whichever the model wrote first)."""
    action = _ACTION.search(text)
    final = _FINAL.search(text)
    if final and (action is None or final.start() < action.start()):
        return FinalAnswer(final.group("answer").strip())
    if action is None:
        if re.search(r"\bAction\s*:", text, re.IGNORECASE):
            raise ReActParseError("an 'Action:' line must be followed by an 'Action Input:' line")
        raise ReActParseError("write 'Action:' and 'Action Input:' lines to use a tool, "
                              "or 'Final Answer:' to answer")
    tool = _find_tool(action.group("tool"), tools)
    raw = _INPUT_END.split(action.group("input"), maxsplit=1)[0]
    return Action(tool, parse_action_input(raw, tool))


def _find_tool(name: str, tools: dict[str, BaseTool]) -> BaseTool:
    cleaned = name.strip().strip("`'\"[]().").strip()
    found = tools.get(cleaned) or next((t for n, t in tools.items() if n.lower() == cleaned.lower()), None)
    if found is None:
        raise ReActParseError(f"unknown tool {cleaned!r}; use one of: {', '.join(tools)}")
    return found


def parse_action_input(raw: str, tool: BaseTool) -> dict[str, Any]:
    """The tool's arguments from the text after 'Action Input:', read as leniently as is safe."""
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    names, required = _arg_names(tool)
    if not text:
        if not required:
            return {}
        raise ReActParseError(f"{tool.name} needs arguments {required} as a JSON object")
    value = _lenient_literal(text)
    if isinstance(value, dict):
        return value
    single = required if len(required) == 1 else names if len(names) == 1 else []
    if len(single) == 1:  # a bare value for a one-argument tool
        if value is _UNREADABLE:
            value = text.strip("'\"")
        return {single[0]: value}
    keys = ", ".join(f'"{n}"' for n in names)
    raise ReActParseError(f"Action Input for {tool.name} must be one JSON object with keys {keys}")


_UNREADABLE = object()


def _lenient_literal(text: str) -> Any:
    """JSON, then JSON with trailing commas dropped, then a Python literal (single quotes).

    Input nested too deeply for the parsers (they recurse) is a parse error, not a crash.
    """
    try:
        return _read_literal(text)
    except RecursionError:
        raise ReActParseError("Action Input is nested too deeply to read; "
                              "write one flat JSON object") from None


def _read_literal(text: str) -> Any:
    attempts = [text, _TRAILING_COMMA.sub(r"\1", text)]
    start = text.find("{")
    if start > 0 or text.rfind("}") < len(text) - 1:
        attempts.append(_TRAILING_COMMA.sub(r"\1", text[start:]) if start >= 0 else text)
    for attempt in attempts:
        try:
            value, _ = json.JSONDecoder().raw_decode(attempt)
            return value
        except ValueError:
            pass
    for attempt in attempts:
        for candidate in (attempt, re.sub(r"\b(true|false|null)\b", lambda m: _JSON_WORDS[m.group(1)], attempt)):
            try:
                return ast.literal_eval(candidate)
            except (ValueError, SyntaxError, MemoryError):
                pass
    return _UNREADABLE


def _arg_names(tool: BaseTool) -> tuple[list[str], list[str]]:
    """All and required argument names the LLM fills (injected ones, like ``config``, left out)."""
    schema = tool.tool_call_schema
    schema = schema if isinstance(schema, dict) else schema.model_json_schema()
    names = list(schema.get("properties", {}))
    return names, [n for n in names if n in set(schema.get("required", []))]


def tools_prompt(tools: list[BaseTool]) -> str:
    """The tool list of the prompt: name, description, and each argument from the args schema."""
    blocks = []
    for tool in tools:
        args = tool_args_help(tool)
        blocks.append(f"- {tool.name}: {tool.description.strip()}\n  Arguments:\n{args}" if args
                      else f"- {tool.name}: {tool.description.strip()} (no arguments)")
    return "\n".join(blocks)


class ReActAgent(ToolLoopAgent):
    """One action per turn through the ReAct text protocol; works with any chat model."""

    agent_name = "react"

    def _loop(self, run: AgentRun) -> str:
        system = render_prompt("react", tools=tools_prompt(self.tools),
                               tool_names=", ".join(t.name for t in self.tools))
        messages: list[BaseMessage] = [SystemMessage(system), *run.request.chat_history,
                                       HumanMessage(run.request.user_text())]
        tools = {t.name: t for t in self.tools}
        llm = self.llm.bind(stop=STOP)
        last_text = ""
        while run.budget.take_llm_call():
            last_text = self._ask(run, llm, messages)
            try:
                step = parse_step(last_text, tools)
            except ReActParseError as error:
                run.emit("parse_error", error=str(error), text=last_text)
                if not run.budget.take_step():
                    break
                observation = f"error: {error}"
            else:
                if isinstance(step, FinalAnswer):
                    return step.answer
                observation = self._act(run, step)
                if observation is None:
                    break
            observation = clip_observation(observation)
            messages += [AIMessage(last_text.rstrip()), HumanMessage(f"Observation: {observation}")]
        return stopped_message(run.budget.stop_reason or "stopped", run.tools, last_text)

    def _ask(self, run: AgentRun, llm: Any, messages: list[BaseMessage]) -> str:
        """One LLM turn, recorded in the trace and streamed as an ``llm_step`` event."""
        started = time.perf_counter()
        try:
            reply = llm.invoke(messages, config=run.config)
        except Exception as error:
            raise LLMError(f"the controller LLM failed: {describe_error(error)}") from error
        seconds = round(time.perf_counter() - started, 6)
        text = message_text(reply)
        run.trace.add_llm_call("agent", list(messages), text, getattr(reply, "usage_metadata", None), seconds)
        run.emit("llm_step", step=run.budget.llm_calls, text=text, seconds=seconds)
        return text

    def _act(self, run: AgentRun, action: Action) -> str | None:
        """Run the action; its observation, or None when a limit stops the run."""
        name, args = action.tool.name, run.tools.resolve_references(action.args)
        earlier = run.tools.earlier_call(name, args)
        if earlier is not None:
            return repeat_note(earlier) if run.budget.note_repeat(name) else None
        if not run.budget.take_step():
            return None
        step = run.tools.start(name, args)
        call = {"name": name, "args": args, "id": f"react-{step.id}", "type": "tool_call"}
        try:  # called as a tool call, so a tool that handles its own errors still reports status
            reply = call_with_deadline(lambda: action.tool.invoke(call, config=run.config), run.budget.remaining_s)
        except CallTimeout as timeout:
            run.budget.run_out_of_time()
            run.tools.fail(step, tool_error(name, timeout))
            return f"error: {step.error}"
        except Exception as error:
            run.tools.fail(step, tool_error(name, error))
            return f"error: {step.error}"
        if getattr(reply, "status", "success") == "error":
            run.tools.fail(step, tool_error(name, message_text(reply)))
            return f"error: {step.error}"
        artifact = getattr(reply, "artifact", None)
        run.tools.finish(step, artifact if isinstance(artifact, dict) else message_text(reply))
        return step.observation
