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


@dataclass
class Attachments:
    """The files sent inside the messages, counted as they are read: at most ``max_files`` of at most
    ``max_bytes`` each (413 at the first one past a limit, before it is decoded)."""

    max_files: int
    max_bytes: int
    files: list[tuple[bytes, str]] = field(default_factory=list)

    def add(self, payload: str, name: str, where: str, what: str) -> None:
        """Decode one base64 ``payload`` and keep it as ``name``; 400 when it is not base64."""
        if len(self.files) >= self.max_files:
            raise ApiError(413, f"{where}: more than {self.max_files} files are attached to the request",
                           code="too_many_files")
        if len(payload) // 4 * 3 > self.max_bytes + 2:  # base64: 4 characters per 3 bytes
            raise ApiError(413, f"{where}: the attached file is larger than the limit of {self.max_bytes} bytes",
                           code="upload_too_large")
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise ApiError(400, f"{where}: {what} is not valid base64") from None
        if len(data) > self.max_bytes:
            raise ApiError(413, f"{where}: the attached file is larger than the limit of {self.max_bytes} bytes",
                           code="upload_too_large")
        self.files.append((data, name))


def _data_url(url: str, where: str, attachments: Attachments) -> None:
    header, sep, payload = url.partition(",")
    if not sep or not header.startswith("data:") or not header.endswith(";base64"):
        raise ApiError(400, f"{where}: only base64 data: URLs can be sent as files "
                            "(put http(s) URLs in the text; the agent downloads them)")
    mime = header[5:-7] or "application/octet-stream"
    name = "attachment." + (mime.split("/", 1)[-1].split("+")[0] or "bin")
    attachments.add(payload, name, where, "the data URL")


def _content(value: Any, where: str, attachments: Attachments | None) -> str:
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
                _data_url(url, at, attachments)
        elif kind == "input_audio" and attachments is not None:
            audio = part.get("input_audio")
            data = audio.get("data") if isinstance(audio, dict) else None
            if not isinstance(data, str):
                raise ApiError(400, f"{at}.input_audio.data is not valid base64")
            attachments.add(data, f"audio.{audio.get('format') or 'wav'}", at, "input_audio.data")
        else:
            raise ApiError(400, f"{at}: unsupported content part type {kind!r}")
    return "\n".join(t for t in texts if t)


def parse_messages(body: Any, *, max_chars: int, allow_files: bool = True, max_files: int = 8,
                   max_file_bytes: int = 20 << 20) -> ChatRequest:
    """``{"messages": [{"role", "content"}, ...]}`` -> the request, its history and attached files
    (at most ``max_files`` of at most ``max_file_bytes`` each: 413 otherwise)."""
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object with 'messages'")
    messages = body.get("messages")
    if messages is None:
        raise ApiError(400, "missing 'messages': send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]}")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty list of {\"role\", \"content\"} objects")
    attachments = Attachments(max_files, max_file_bytes)
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
    return ChatRequest(input=request["content"], chat_history=history, attachments=attachments.files)
