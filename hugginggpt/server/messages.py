"""Chat messages in, the agent contract's input out: the last message is the request, the earlier
ones its chat history (JARVIS's and OpenAI's bodies alike). Content is a string or OpenAI's list of
parts; ``image_url``/``input_audio`` parts carrying data (``data:`` URLs, base64) become uploads."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from hugginggpt.server.errors import ApiError

ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass
class ChatRequest:
    input: str
    chat_history: list[dict[str, str]] = field(default_factory=list)
    #: (bytes, file name) of files sent inside the messages, to store in the run's folder
    attachments: list[tuple[bytes, str]] = field(default_factory=list)


def _data_url(url: str, where: str) -> tuple[bytes, str]:
    header, sep, payload = url.partition(",")
    if not sep or not header.startswith("data:") or not header.endswith(";base64"):
        raise ApiError(400, f"{where}: only base64 data: URLs can be sent as files "
                            "(put http(s) URLs in the text; the agent downloads them)")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, f"{where}: the data URL is not valid base64") from None
    mime = header[5:-7] or "application/octet-stream"
    name = "attachment." + (mime.split("/", 1)[-1].split("+")[0] or "bin")
    return data, name


def _content(value: Any, where: str, attachments: list[tuple[bytes, str]] | None) -> str:
    """The text of one message's content; data parts go to ``attachments`` (None: refuse them)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if not isinstance(value, list):
        raise ApiError(400, f"{where}.content must be a string or a list of parts, got {type(value).__name__}")
    texts = []
    for i, part in enumerate(value):
        at = f"{where}.content[{i}]"
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise ApiError(400, f"{at} must be an object with a 'type'")
        kind = part["type"]
        if kind in ("text", "input_text"):
            if not isinstance(part.get("text"), str):
                raise ApiError(400, f"{at}.text must be a string")
            texts.append(part["text"])
        elif kind == "image_url" and attachments is not None:
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if not isinstance(url, str):
                raise ApiError(400, f"{at}.image_url.url must be a string")
            if url.startswith(("http://", "https://")):
                texts.append(url)
            else:
                attachments.append(_data_url(url, at))
        elif kind == "input_audio" and attachments is not None:
            audio = part.get("input_audio") or {}
            try:
                data = base64.b64decode(audio.get("data", ""), validate=True)
            except (binascii.Error, ValueError, TypeError):
                raise ApiError(400, f"{at}.input_audio.data is not valid base64") from None
            attachments.append((data, f"audio.{audio.get('format') or 'wav'}"))
        else:
            raise ApiError(400, f"{at}: unsupported content part type {kind!r}")
    return "\n".join(t for t in texts if t)


def parse_messages(body: Any, *, max_chars: int, allow_files: bool = True) -> ChatRequest:
    """``{"messages": [{"role", "content"}, ...]}`` -> the request, its history and attached files."""
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object with 'messages'")
    messages = body.get("messages")
    if messages is None:
        raise ApiError(400, "missing 'messages': send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]}")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty list of {\"role\", \"content\"} objects")
    attachments: list[tuple[bytes, str]] = []
    parsed: list[dict[str, str]] = []
    total = 0
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise ApiError(400, f"{where} must be an object with 'role' and 'content'")
        role = message.get("role")
        if role not in ROLES:
            raise ApiError(400, f"{where}.role must be one of {', '.join(ROLES)}, got {role!r}")
        last = i == len(messages) - 1
        text = _content(message.get("content"), where, attachments if (last and allow_files) else None)
        total += len(text)
        if total > max_chars:
            raise ApiError(413, f"the messages are longer than the limit of {max_chars} characters",
                           code="message_too_long")
        parsed.append({"role": "system" if role == "developer" else role, "content": text})
    request = parsed[-1]
    if request["role"] != "user":
        raise ApiError(400, f"the last message must be the user's request, got role {request['role']!r}")
    if not request["content"].strip():
        raise ApiError(400, "the last message (the request) is empty")
    history = [m for m in parsed[:-1] if m["role"] in ("user", "assistant")]  # agents bring their own system prompts
    return ChatRequest(input=request["content"], chat_history=history, attachments=attachments)
