"""Tool calls as text, the Hermes / Qwen2.5 way: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Instruction-tuned GGUF models are trained to call tools in text, not through an API, so the embedded
controller must (1) show the tools and past calls to the model in the form it was trained on, and
(2) read the calls back out of its answer. A block that cannot be read, or names an unknown tool,
stays in the text, so an agent sees what the model wrote instead of losing it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages.tool import ToolCall, tool_call

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)

TOOLS_INSTRUCTIONS = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tools}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)
"""Qwen2.5's own tool preamble, for chat templates that cannot render tools themselves."""


@dataclass
class ParsedToolCalls:
    """What a completion says: text for the user, and the tool calls it makes."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)


def new_call_id() -> str:
    """A fresh id that ties a call to its ``ToolMessage`` (models do not write ids themselves)."""
    return "call_" + uuid.uuid4().hex[:24]


def _strip_fence(text: str) -> str:
    text = text.strip()
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


def _as_call(obj: Any, known: set[str] | None) -> ToolCall | None:
    """``{"name", "arguments"}`` (arguments a dict or a JSON string of one) as a call, else None."""
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict):  # OpenAI's nesting
        obj = obj["function"]
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    if known is not None and obj["name"] not in known:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return None
    return tool_call(name=obj["name"], args=args, id=new_call_id())


def _json_values(text: str) -> list[Any] | None:
    """The JSON values ``text`` is made of (fences allowed; one, or several separated by whitespace).

    Several values: small models (Qwen2.5-Coder-0.5B) often leave out the ``<tool_call>`` tags and
    write parallel calls as bare objects, one per line. A surplus
    closing brace after a value is tolerated (small models often write one). Any other text
    between or after the values means the text is not calls: None.
    """
    text = _strip_fence(text)
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while position < len(text):
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return None
        values.extend(value if isinstance(value, list) else [value])
        position = len(text) - len(text[position:].lstrip().lstrip("}").lstrip())
    return values or None


def _as_calls(values: list[Any] | None, known: set[str] | None) -> list[ToolCall] | None:
    """All of ``values`` as calls, or None if any of them is not one."""
    found = [_as_call(value, known) for value in values or []]
    return found if found and all(found) else None  # type: ignore[return-value]


def parse_tool_calls(text: str, tool_names: Iterable[str] | None = None) -> ParsedToolCalls:
    """Split a completion into content and tool calls.

    Reads ``<tool_call>`` blocks (an unclosed last block too: the answer may stop at its end), or,
    when there are none, an answer made only of call objects (or lists of them). ``tool_names``
    limits calls to known tools; anything unusable is kept verbatim in ``content``.
    """
    known = set(tool_names) if tool_names is not None else None
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _BLOCK.finditer(text):
        kept.append(text[position : match.start()])
        position = match.end()
        found = _as_calls(_json_values(match.group(1)), known)
        if found:
            calls.extend(found)
        else:
            kept.append(match.group(0))
    kept.append(text[position:])
    if not calls and "<tool_call>" not in text:
        found = _as_calls(_json_values(text), known)
        if found:
            return ParsedToolCalls(content="", tool_calls=found)
    return ParsedToolCalls(content="".join(kept).strip(), tool_calls=calls)


def _text(content: Any) -> str:
    """Message content as plain text (OpenAI content parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str) or part.get("type") == "text"
        )
    return str(content)


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function", call)
    args = function.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return {"_raw": args}
    return args if isinstance(args, dict) else {}


def messages_for_template(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages as Hugging Face chat templates expect them.

    Templates render ``arguments`` with ``tojson``, so they must be dicts, not JSON strings (else the
    model sees doubly encoded calls); content must be a string (templates concatenate it).
    """
    out = []
    for message in messages:
        message = {**message, "content": _text(message.get("content"))}
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "type": "function",
                    "id": call.get("id"),
                    "function": {"name": call.get("function", call).get("name"), "arguments": _arguments(call)},
                }
                for call in message["tool_calls"]
            ]
        out.append(message)
    return out


def render_call(name: str, args: dict[str, Any]) -> str:
    """One call written the way the model writes it."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "\n</tool_call>"


def messages_as_text_protocol(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a chat template that knows nothing of tools: all of it as plain turns.

    The tools go into the system prompt (Qwen2.5's wording), past calls into the assistant's text,
    and consecutive tool results into one user turn of ``<tool_response>`` blocks, as Qwen does.
    """
    out: list[dict[str, Any]] = []
    for message in messages_for_template(messages):
        role = message["role"]
        if role == "assistant" and message.get("tool_calls"):
            calls = [render_call(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
            out.append({"role": "assistant", "content": "\n".join(filter(None, [message["content"], *calls]))})
        elif role == "tool":
            response = "<tool_response>\n" + message["content"] + "\n</tool_response>"
            if out and out[-1].get("_tool_results"):
                out[-1]["content"] += "\n" + response
            else:
                out.append({"role": "user", "content": response, "_tool_results": True})
        else:
            out.append({"role": role, "content": message["content"]})
    for message in out:
        message.pop("_tool_results", None)
    if not tools:
        return out
    block = TOOLS_INSTRUCTIONS.format(tools="\n".join(json.dumps(t, ensure_ascii=False) for t in tools))
    if out and out[0]["role"] == "system":
        out[0]["content"] = (out[0]["content"] + "\n\n" + block).strip()
    else:
        out.insert(0, {"role": "system", "content": block})
    return out
