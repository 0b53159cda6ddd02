"""Chat-message content as plain text: the one place that reads LangChain content blocks."""

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
