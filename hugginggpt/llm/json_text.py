"""The one lenient JSON reader: JSON values inside an LLM's text answer.

LLMs wrap JSON in code fences and prose, use single quotes and Python literals, leave trailing
commas, and stop mid-value when they run out of tokens. Well-formed JSON is read by the C decoder;
anything else is handed to ``json_repair``, which keeps string contents intact (a Python-literal
rewrite would turn ``'null and void'`` into ``'None and void'``) and closes truncated values.

- :func:`find_json` — the first JSON array/object in a text that a predicate accepts (plans,
  selections, tool calls written as text).
- :func:`read_json` — one JSON value at the start of a text (a ReAct ``Action Input``), scalars too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import json_repair

__all__ = ["MAX_JSON_DEPTH", "MAX_JSON_STARTS", "NestedTooDeeply", "find_json", "read_json", "strip_fence"]

#: How many opening brackets :func:`find_json` tries as the start of a JSON value.
MAX_JSON_STARTS = 64
#: Deeper brackets than this are not JSON an agent needs, and are not worth a repair attempt.
MAX_JSON_DEPTH = 100

# Possessive quantifiers (``*+``): the whitespace after a fence's opening is never given back, so a
# fence followed by a long run of spaces costs one scan, not one per space.
_FENCE = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.DOTALL)
_WHOLE_FENCE = re.compile(r"^\s*+```[\w-]*+\s*+(?P<body>.*?)\n?```\s*+$", re.DOTALL)
_CLOSER = {"[": "]", "{": "}"}
_JSONISH = re.compile(r"[\"':]")  # a string or a key: text meant as JSON
_PLAIN_VALUES = re.compile(r"(?:[\s\d.,+\-eE\[\]{}]|true|false|null|None|True|False)*")


class NestedTooDeeply(ValueError):
    """The text's brackets nest deeper than :data:`MAX_JSON_DEPTH`."""


def strip_fence(text: str) -> str:
    """``text`` without one code fence around all of it."""
    fenced = _WHOLE_FENCE.match(text or "")
    return fenced.group("body").strip() if fenced else (text or "").strip()


def find_json(text: str, accept: Callable[[Any], bool] = lambda value: True) -> Any:
    """The first JSON array or object in ``text`` that ``accept``s.

    Looks inside code fences first, then at each opening bracket of the whole text in order; a span
    that is not well-formed JSON is repaired (``json_repair``) unless it reads as prose in brackets
    ("[this]"), and only the first span left open (a cut-off answer) is closed. Raises ``ValueError`` when there is none
    (:class:`NestedTooDeeply` when the only candidates nest too deeply to read).
    """
    text = text or ""
    stripped = text.strip()
    if stripped[:1] in ("[", "{") and "```" not in stripped:  # a good model's whole answer
        value = _strict(stripped)
        if value is not _NONE and accept(value):
            return value
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    too_deep = truncated_tried = False
    for source in sources:
        # Each start rescans to its closing bracket, so bound the starts: an LLM answer holds its
        # JSON within the first few brackets, and junk like "{" * 6000 must not cost seconds.
        for start in [i for i, ch in enumerate(source) if ch in _CLOSER][:MAX_JSON_STARTS]:
            opener, span = source[start], _balanced(source, start)
            if span is not None:
                value = _strict(span)
                if value is not _NONE and accept(value):
                    return value
            elif truncated_tried:  # one repair of a cut-off answer is enough: each costs a full scan
                continue
            else:
                truncated_tried, span = True, source[start:]
            if _depth(span) > MAX_JSON_DEPTH:
                too_deep = True
                continue
            if not _JSONISH.search(span) and not _PLAIN_VALUES.fullmatch(span):
                continue  # prose in brackets ("[this]", "{x}"), not a value the text meant
            value = _repaired(span, opener)  # single quotes, Python literals, trailing commas, cut-off ends
            if value is not _NONE and accept(value):
                return value
    if too_deep:
        raise NestedTooDeeply(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    raise ValueError("no JSON found")


def read_json(text: str) -> Any:
    """The JSON value ``text`` starts with (after an optional code fence): an object, an array, or
    a scalar. Raises ``ValueError`` when unreadable, :class:`NestedTooDeeply` when nested too deeply."""
    text = strip_fence(text)
    if _depth(text) > MAX_JSON_DEPTH:
        raise NestedTooDeeply(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except ValueError:
        pass
    if text[:1] not in _CLOSER:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            raise ValueError("no JSON value found")
        text = text[start:]
    return find_json(text)


_NONE = object()


def _strict(span: str) -> Any:
    try:
        return json.loads(span)
    except (ValueError, RecursionError):
        return _NONE


def _repaired(span: str, opener: str) -> Any:
    try:
        value = json_repair.loads(span, skip_json_loads=True)
    except (ValueError, RecursionError):
        return _NONE
    # A repair of prose ("{x}" becomes ["x}"]) changes the kind of value: not JSON the text meant.
    return value if isinstance(value, dict if opener == "{" else list) else _NONE


def _depth(text: str) -> int:
    """The deepest bracket nesting in ``text`` (quotes ignored: an upper bound, cheap)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _balanced(text: str, start: int) -> str | None:
    """The bracketed span starting at ``start`` (strings respected), or None when it never closes."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return text[start : i + 1]
    return None
