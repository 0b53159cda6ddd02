"""Tool calls as text, the Hermes / Qwen2.5 way: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Instruction-tuned GGUF models are trained to call tools in text, not through an API, so the embedded
controller must (1) show the tools and past calls to the model in the form it was trained on, and
(2) read the calls back out of its answer, with or without the ``<tool_call>`` tags (Qwen and
Hermes-style models often leave them out). A call that cannot be made (unreadable, unknown tool, bad
arguments) goes to ``AIMessage.invalid_tool_calls`` and its text stays in the content, so an agent
sees what the model wrote instead of losing it.

A streamed answer shows only the text that is surely content (:func:`settled_content`) while it is
written, and its calls at the end as ``tool_call_chunks`` (:func:`tool_call_chunks`), so the chunks add
up to the same message.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages.tool import (
    InvalidToolCall,
    ToolCall,
    ToolCallChunk,
    invalid_tool_call,
    tool_call,
    tool_call_chunk,
)
from langchain_core.utils.json import parse_partial_json

from hugginggpt.llm.content import content_text as _text
from hugginggpt.llm.json_text import read_json, strip_fence

_TAG = "<tool_call>"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_CUT_CALL = re.compile(r'\[?\s*\{\s*"name"\s*:\s*"([^"\\]+)"')  # after the fence and spaces: no backtracking

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
    invalid_tool_calls: list[InvalidToolCall] = field(default_factory=list)
    """Calls the model tried to make that cannot be made (unreadable, unknown tool, bad arguments)."""


def new_call_id() -> str:
    """A fresh id that ties a call to its ``ToolMessage`` (models do not write ids themselves)."""
    return "call_" + uuid.uuid4().hex[:24]


def _call_or_error(obj: Any, known: set[str] | None) -> ToolCall | str:
    """``{"name", "arguments"}`` (arguments a dict or a JSON string of one) as a call, else why not."""
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict):  # OpenAI's nesting
        obj = obj["function"]
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return "not a call: no function name"
    if known is not None and obj["name"] not in known:
        return f"{obj['name']!r} is not one of the tools offered ({', '.join(sorted(known)) or 'none'})"
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            return f"the arguments are not JSON: {exc.msg}"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"the arguments are a JSON {type(args).__name__}, not an object"
    return tool_call(name=obj["name"], args=args, id=new_call_id())


def _json_values(text: str) -> list[Any] | None:
    """The JSON values ``text`` is made of (fences allowed; one, or several separated by whitespace).

    Several values: small models (Qwen2.5-Coder-0.5B) often leave out the ``<tool_call>`` tags and
    write parallel calls as bare objects, one per line. A surplus
    closing brace after a value is tolerated (small models often write one). Any other text
    between or after the values means the text is not calls: None.
    """
    text = strip_fence(text)
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while position < len(text):
        try:
            value, position = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deeply to be calls
            return None
        values.extend(value if isinstance(value, list) else [value])
        position = len(text) - len(text[position:].lstrip().lstrip("}").lstrip())
    return values or None


def _lenient_values(text: str) -> list[Any] | None:
    """``_json_values``, else one value read by the lenient reader (single quotes, trailing commas)
    when the text is one complete object or list; a cut-off value (unbalanced brackets) is None."""
    values = _json_values(text)
    if values is not None:
        return values
    body = strip_fence(text)
    if body[:1] not in "[{" or body.count("{") > body.count("}") or body.count("[") > body.count("]"):
        return None
    try:
        json.JSONDecoder().raw_decode(body)
        return None  # well-formed JSON followed by other text: not calls only
    except RecursionError:
        return None
    except json.JSONDecodeError:
        pass
    try:
        value = read_json(body)
    except ValueError:
        return None
    return value if isinstance(value, list) else [value]


def _name_of(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


def _invalid(name: str | None, raw: str, error: str) -> InvalidToolCall:
    return invalid_tool_call(name=name, args=raw.strip(), id=new_call_id(), error=error)


def _split(values: list[Any], known: set[str] | None, raw: str) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """``values`` as calls, and the ones that cannot be made as invalid calls with the reason."""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for value in values:
        found = _call_or_error(value, known)
        if isinstance(found, str):
            text = json.dumps(value, ensure_ascii=False) if len(values) > 1 else raw
            invalid.append(_invalid(_name_of(value), text, found))
        else:
            calls.append(found)
    return calls, invalid


def _read_block(body: str, known: set[str] | None) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """The calls of one ``<tool_call>`` block; what cannot be read becomes an invalid call."""
    values = _lenient_values(body)
    if values is None:
        return [], [_invalid(None, body, "the tool call is not readable JSON (or was cut off)")]
    return _split(values, known, body)


def _unfenced_start(text: str) -> str:
    """``text`` without the spaces and the opening code fence (```, ```json) before its first value."""
    head = text.lstrip()
    if head.startswith("```"):
        head = head[3:]
        head = (head[4:] if head[:4].lower() == "json" else head).lstrip()
    return head


def _read_bare(text: str, known: set[str]) -> tuple[list[ToolCall], list[InvalidToolCall]] | None:
    """An answer made only of call objects without tags (Qwen and Hermes-style models write them).

    Read only when every value names a tool offered in this request: ``{"name": "Bob"}`` is an
    answer, not a call. A value naming an offered tool whose arguments are unusable is an invalid call,
    and so is an answer that opens a call of an offered tool and is cut off before the call is complete
    (``max_tokens``, a repetition stop).
    """
    values = _lenient_values(text)
    if values is None:
        opened = _CUT_CALL.match(_unfenced_start(text))
        if opened is not None and opened.group(1) in known:
            return [], [_invalid(opened.group(1), text, "the tool call is not readable JSON (or was cut off)")]
        return None
    if not values or not all(_name_of(value) in known for value in values):
        return None
    return _split(values, known, text)


def parse_tool_calls(text: str, tool_names: Iterable[str] | None = None) -> ParsedToolCalls:
    """Split a completion into content, tool calls and calls that cannot be made.

    Reads ``<tool_call>`` blocks (an unclosed last block too: the answer may stop at its end), or,
    when there are none, an answer made only of call objects naming offered tools (or lists of
    them; only when ``tool_names`` is given). ``tool_names`` limits calls to known tools. A block
    that cannot be read, names an unknown tool or has unusable arguments stays verbatim in
    ``content`` (the agent sees what the model wrote) and is listed in ``invalid_tool_calls``
    (LangChain's place for them), with the reason.
    """
    known = set(tool_names) if tool_names is not None else None
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _BLOCK.finditer(text):
        kept.append(text[position : match.start()])
        position = match.end()
        found, bad = _read_block(match.group(1), known)
        calls.extend(found)
        invalid.extend(bad)
        if bad:
            kept.append(match.group(0))
    kept.append(text[position:])
    if not calls and not invalid and known is not None and "<tool_call>" not in text:
        bare = _read_bare(text, known)
        if bare is not None:
            found, bad = bare
            return ParsedToolCalls(content="" if not bad else text.strip(), tool_calls=found, invalid_tool_calls=bad)
    return ParsedToolCalls(content="".join(kept).strip(), tool_calls=calls, invalid_tool_calls=invalid)


def settled_content(text: str, tool_names: Iterable[str] | None = None) -> str:
    """The start of ``parse_tool_calls(answer, tool_names).content`` that is certain while ``text`` is
    only the beginning of the answer: what a stream may show before the answer ends.

    That is the text before the first ``<tool_call>`` tag (or the start of one cut off at the end),
    without the whitespace around it (the content is stripped); nothing while, with tools offered,
    the answer may still be bare call objects (it opens with ``{``, ``[`` or a code fence). A longer
    ``text`` settles a longer content, and the final content starts with every one of them.
    """
    head = text.lstrip()
    if tool_names is not None and (not head or head[0] in "{[`"):
        return ""
    cut = text.find(_TAG)
    if cut < 0:  # a tag may be starting at the end
        start = max(0, len(text) - len(_TAG) + 1)
        cut = next((i for i in range(start, len(text)) if _TAG.startswith(text[i:])), len(text))
    return text[:cut].strip()


def _read_as_a_call(args: str | None) -> bool:
    """Whether LangChain reads a tool-call chunk with these ``args`` as a call (``AIMessageChunk``:
    no args, or args that ``parse_partial_json`` reads as an object), not as an invalid call."""
    if not args:
        return True
    try:
        return isinstance(parse_partial_json(args), dict)
    except Exception:  # noqa: BLE001 - LangChain files any failure as an invalid call
        return False


def tool_call_chunks(parsed: ParsedToolCalls) -> list[ToolCallChunk]:
    """The calls and invalid calls of ``parsed`` as stream chunks that add up to the same calls.

    ``AIMessageChunk`` derives ``tool_calls`` and ``invalid_tool_calls`` from its chunks: args that
    read as a JSON object make a call, anything else an invalid call, with no error (a chunk has no
    place for one). So a call carries its args as JSON, and an invalid call what the model wrote, as
    a JSON string where that text would itself read as an object (an unknown tool, unusable
    arguments), so that it stays an invalid call. Calls come first, then invalid calls, each list in
    its order.
    """
    chunks = [
        tool_call_chunk(name=call["name"], args=json.dumps(call["args"], ensure_ascii=False), id=call["id"],
                        index=index)
        for index, call in enumerate(parsed.tool_calls)
    ]
    for index, call in enumerate(parsed.invalid_tool_calls, start=len(chunks)):
        args = call["args"]
        if _read_as_a_call(args):
            args = json.dumps(args or "", ensure_ascii=False)
        chunks.append(tool_call_chunk(name=call["name"], args=args, id=call["id"], index=index))
    return chunks


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
