"""The one adapter from an agent to its stage events, and the run-file links added to them.

Every agent offers ``astream_stage_events(input, config)``: dicts ``{"event": ..., "t": ...}``, the
last one ``final`` with the whole output. Closing the iterator cancels the run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hugginggpt.server.files import is_regular_file
from hugginggpt.tools.resources.sniff import file_kind
from hugginggpt.tools.table import MEDIA_KINDS


def stage_events(agent: Any, input: dict[str, Any], config: dict[str, Any] | None = None) -> AsyncIterator[dict]:
    """The agent's stage events for one request (every agent's ``astream_stage_events``)."""
    return agent.astream_stage_events(input, config)


def media_kind(name: str) -> str:
    """How a page shows a file: image, audio, video (``sniff.file_kind``) or file."""
    kind = file_kind(name)
    return kind if kind in MEDIA_KINDS else "file"


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > 8:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def run_files(value: Any, folder: Path, base_url: str) -> list[dict[str, str]]:
    """The files of the run folder that ``value`` names (absolute paths in results, answers, args),
    each as ``{"name": path relative to the folder, "url", "kind"}``; nothing outside the folder."""
    found: dict[str, dict[str, str]] = {}
    prefix = str(folder) + "/"
    for text in _strings(value):
        start = text.find(prefix)
        while start != -1:
            end = start + len(prefix)
            while end < len(text) and not text[end].isspace() and text[end] not in "\"'`),;]}<>":
                end += 1
            candidate = text[start:end].rstrip(".")
            rel = candidate[len(prefix):]
            if rel and ".." not in Path(rel).parts and rel not in found and is_regular_file(folder / rel):
                found[rel] = {"name": rel, "url": f"{base_url}/files/{quote(rel)}", "kind": media_kind(rel)}
            start = text.find(prefix, end)
    return list(found.values())
