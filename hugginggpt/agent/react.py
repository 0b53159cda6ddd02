"""ReActAgent: Thought / Action / Action Input / Observation ... Final Answer, as plain text.

For controller LLMs without native tool calling (small local models). The model is stopped before
it can invent an observation (``stop=["\\nObservation:"]``); its action input is read leniently
(code fences, single quotes, trailing commas, a bare string for a one-argument tool). Whatever
cannot be read goes back to the model as an error observation, bounded by the step limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

from hugginggpt.agent import events as ev
from hugginggpt.agent.observations import clip_observation, stopped_message, tool_args_help
from hugginggpt.agent.run import AgentRun
from hugginggpt.agent.tool_loop import ToolLoopAgent
from hugginggpt.agent.tool_trace import ToolTrace
from hugginggpt.llm.content import content_text
from hugginggpt.llm.json_text import NestedTooDeeply, read_json, strip_fence
from hugginggpt.prompts import render_prompt

STOP = ["\nObservation:"]

# The patterns over model text use possessive quantifiers (nothing they take is given back), and the
# searches that could restart inside a long run (of spaces, newlines, "Action:"s on one line) are
# Python loops over the runs: every scan of a turn is linear in its length.
_ACTION_HEAD = re.compile(r"Action\s*+\d*+\s*+:", re.IGNORECASE)
_INPUT_HEAD = re.compile(r"\n++[ \t]*+Action\s*+\d*+\s*+Input\s*+\d*+\s*+:", re.IGNORECASE)
_FINAL = re.compile(r"Final\s*+Answer\s*+:", re.IGNORECASE)
_ANY_ACTION = re.compile(r"\bAction\s*+:", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_NEXT_PART = re.compile(r"(?:Observation|Thought|Final\s*+Answer)\s*+:", re.IGNORECASE)


@dataclass
class _ActionText:
    start: int
    tool: str
    input: str


def _find_action(text: str) -> _ActionText | None:
    """The first "Action: TOOL" line followed (after blank lines) by an "Action Input:" line, with the
    rest of the turn as its input; the tool is the rest of the "Action:" line."""
    failed_line_end = -1
    for head in _ACTION_HEAD.finditer(text):
        if head.end() <= failed_line_end:  # the same line as a head that failed: the same next line
            continue
        line_end = text.find("\n", head.end())
        if line_end == -1:
            return None
        following = _INPUT_HEAD.match(text, line_end)
        if following is not None:
            return _ActionText(head.start(), text[head.end():line_end].strip(" \t"), text[following.end():])
        failed_line_end = line_end
    return None


def _input_end(text: str) -> int:
    """Where an action input ends: at the first line that starts an Observation, Thought or Final Answer
    (after any blank lines), else at the end."""
    for run in _WHITESPACE.finditer(text):
        newline = text.find("\n", run.start(), run.end())
        if newline != -1 and _NEXT_PART.match(text, run.end()):
            return newline
    return len(text)


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
    action = _find_action(text)
    final = _FINAL.search(text)
    if final and (action is None or final.start() < action.start):
        return FinalAnswer(text[final.end():].strip())
    if action is None:
        if _ANY_ACTION.search(text):
            raise ReActParseError("an 'Action:' line must be followed by an 'Action Input:' line")
        raise ReActParseError("write 'Action:' and 'Action Input:' lines to use a tool, "
                              "or 'Final Answer:' to answer")
    tool = _find_tool(action.tool, tools)
    raw = action.input[:_input_end(action.input)]
    return Action(tool, parse_action_input(raw, tool))


def _find_tool(name: str, tools: dict[str, BaseTool]) -> BaseTool:
    cleaned = name.strip().strip("`'\"[]().").strip()
    found = tools.get(cleaned) or next((t for n, t in tools.items() if n.lower() == cleaned.lower()), None)
    if found is None:
        raise ReActParseError(f"unknown tool {cleaned!r}; use one of: {', '.join(tools)}")
    return found


def parse_action_input(raw: str, tool: BaseTool) -> dict[str, Any]:
    """The tool's arguments from the text after 'Action Input:', read as leniently as is safe."""
    text = strip_fence(raw)
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
    """The JSON value the text starts with, read leniently (``hugginggpt.llm.json_text``).

    Input nested too deeply to read is a parse error, not a crash.
    """
    try:
        return read_json(text)
    except NestedTooDeeply:
        raise ReActParseError("Action Input is nested too deeply to read; "
                              "write one flat JSON object") from None
    except ValueError:
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

    async def _loop(self, run: AgentRun, calls: ToolTrace) -> str:
        system = render_prompt("react", tools=tools_prompt(self.tools),
                               tool_names=", ".join(t.name for t in self.tools))
        messages: list[BaseMessage] = [SystemMessage(system), *run.request.chat_history,
                                       HumanMessage(run.request.user_text())]
        tools = {t.name: t for t in self.tools}
        llm = self.turn_llm.bind(stop=STOP)
        last_text = ""
        while run.budget.take_llm_call():
            last_text = (await self.ask(run, llm, messages)).text
            try:
                step = parse_step(last_text, tools)
            except ReActParseError as error:
                await run.emit(ev.PARSE_ERROR, error=str(error), text=last_text)
                if not run.budget.take_step():
                    break
                observation = f"error: {error}"
            else:
                if isinstance(step, FinalAnswer):
                    return step.answer
                call = {"name": step.tool.name, "args": step.args, "id": f"react-{len(calls.steps)}"}
                reply = await self.call_tool(run, calls, call,
                                             lambda tool_call, tool=step.tool: tool.ainvoke(tool_call, run.config))
                if run.budget.stop_reason is not None:
                    break
                observation = content_text(reply)
            messages += [AIMessage(last_text.rstrip()), HumanMessage(f"Observation: {clip_observation(observation)}")]
        return stopped_message(run.budget.stop_reason or "stopped", calls, last_text)
