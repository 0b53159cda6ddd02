"""Produced media files as MCP content: an image or audio file inline plus a text naming its path."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from hugginggpt.tools.table import MEDIA_KINDS

#: Files larger than this are named by path only, not sent inline.
MAX_INLINE_BYTES = 8 << 20
#: How audio comes back: MCP audio content (the spec's own), an embedded resource (for clients that
#: cannot read audio content yet, e.g. langchain-mcp-adapters 0.3), or the path alone.
AUDIO_MODES = ("audio", "resource", "path")
#: The content type of a file whose name tells none (the kinds sent inline).
_DEFAULT_TYPE = {"image": "image/png", "audio": "audio/wav"}


def media_content(kind: str, path: str, audio_as: str = "audio") -> list[Any]:
    """An image or audio file as MCP content plus a text naming its path (video, a file too large to
    send inline, or a missing one: the path). ``audio_as``: one of ``AUDIO_MODES``."""
    from mcp import types

    file = Path(path)
    mime = mimetypes.guess_type(file.name)[0] or _DEFAULT_TYPE.get(kind, "")
    named = types.TextContent(type="text", text=f"{kind} file: {file}")
    try:
        size = file.stat().st_size
    except OSError:
        return [named]
    mode = audio_as if kind == "audio" else ("image" if kind == "image" else "path")
    if mode == "path" or size > MAX_INLINE_BYTES:
        return [named]
    data = base64.b64encode(file.read_bytes()).decode("ascii")
    if mode == "image":
        return [types.ImageContent(type="image", data=data, mimeType=mime), named]
    if mode == "audio":
        return [types.AudioContent(type="audio", data=data, mimeType=mime), named]
    blob = types.BlobResourceContents(uri=file.as_uri(), mimeType=mime, blob=data)
    return [types.EmbeddedResource(type="resource", resource=blob), named]


def result_media(result: dict[str, Any], audio_as: str = "audio") -> list[Any]:
    """The content of each media file a result envelope names, in the order of ``MEDIA_KINDS``."""
    content: list[Any] = []
    for kind in MEDIA_KINDS:
        if isinstance(result.get(kind), str):
            content += media_content(kind, result[kind], audio_as)
    return content
