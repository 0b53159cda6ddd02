"""Chat messages as plain text (the one place that reads LangChain content blocks), and whether the
model's answer was cut off (its token limit, or the embedded model's repetition stop)."""

from __future__ import annotations

from typing import Any


def content_text(value: Any) -> str:
    """The text of a message (or of its ``content``): a string as is, content blocks' text parts
    joined (images and other non-text blocks left out), None as ``""``."""
    content = getattr(value, "content", value)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part if isinstance(part, str) else str(part.get("text", ""))
                       for part in content
                       if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") == "text"))
    return str(content)


#: The ``finish_reason`` of an answer the embedded model stopped because it was repeating itself.
REPETITION = "repetition"
#: How an answer that ended before the model finished it says so: OpenAI-style ``finish_reason``
#: (llama.cpp, TGI, Inference Providers: ``length``), Anthropic-style ``stop_reason`` (``max_tokens``),
#: and the embedded model's repetition stop.
CUT_OFF = frozenset({"length", "max_tokens", REPETITION})


def finish_reason(message: Any) -> str | None:
    """Why ``message`` (an AIMessage) ended, as its provider said (``stop``, ``length``, ``tool_calls``,
    ``max_tokens``, ...); None when it did not say."""
    metadata = getattr(message, "response_metadata", None) or {}
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return str(reason) if reason else None


def cut_off(message: Any) -> bool:
    """Whether ``message`` (an AIMessage) ended before the model finished it: at its token limit
    (``length``, ``max_tokens``), or stopped because it was repeating itself (``repetition``)."""
    return finish_reason(message) in CUT_OFF
