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


#: Characters that end a path written in model text (besides white space).
_PATH_END = "\"'`),;]}<>"


def _path_end(text: str, start: int, *, sentence: bool = True) -> int:
    """Where the path whose name starts at ``start`` in ``text`` ends (``sentence``: a trailing full stop
    is the sentence's)."""
    end = start
    while end < len(text) and not text[end].isspace() and text[end] not in _PATH_END:
        end += 1
    while sentence and end > start and text[end - 1] == ".":
        end -= 1
    return end


def _paths_in(text: str, prefix: str) -> list[tuple[int, int]]:
    """(start, end) of each path in ``text`` that starts with ``prefix``, left to right."""
    found, start = [], text.find(prefix)
    while start != -1:
        end = _path_end(text, start + len(prefix))
        found.append((start, end))
        start = text.find(prefix, max(end, start + len(prefix)))
    return found


def run_files(value: Any, folder: Path, base_url: str) -> list[dict[str, str]]:
    """The files of the run folder that ``value`` names (absolute paths in results, answers, args),
    each as ``{"name": path relative to the folder, "url", "kind"}``; nothing outside the folder."""
    found: dict[str, dict[str, str]] = {}
    prefix = str(folder) + "/"
    for text in _strings(value):
        for start, end in _paths_in(text, prefix):
            rel = text[start + len(prefix):end]
            if rel and ".." not in Path(rel).parts and rel not in found and is_regular_file(folder / rel):
                found[rel] = {"name": rel, "url": f"{base_url}/files/{quote(rel)}", "kind": media_kind(rel)}
    return list(found.values())


class Links:
    """Paths inside a run's folder, as the server names them to its clients: the URL it serves each
    at (``<origin>/runs/<id>/files/<name>``), never a path on the server's disk.

    ``text``/``value``: a string or a JSON value with every such path replaced. ``feed`` and ``flush``:
    the same for text that comes in pieces (an answer as the model writes it): a piece is given back
    up to where no path may still be coming, so the pieces add up to ``text`` of the whole.
    """

    def __init__(self, folder: Path, url: str):
        self.prefix = str(folder) + "/"
        self.url = url.rstrip("/") + "/files/"
        self._pending = ""

    def text(self, text: str) -> str:
        if self.prefix not in text:
            return text
        parts, last = [], 0
        for start, end in _paths_in(text, self.prefix):
            rel = text[start + len(self.prefix):end]
            if rel and ".." not in Path(rel).parts:
                parts += [text[last:start], self.url + quote(rel)]
                last = end
        return "".join(parts) + text[last:]

    def value(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if depth > 32:
            return value
        if isinstance(value, dict):
            return {k: self.value(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v, depth + 1) for v in value]
        return value

    def feed(self, piece: str) -> str:
        self._pending += piece
        text, cut = self._pending, len(self._pending)
        for start, end in _paths_in(text, self.prefix):
            if _path_end(text, start + len(self.prefix), sentence=False) == len(text):  # may go on in the next piece
                cut = start
                break
        else:
            for size in range(min(len(self.prefix) - 1, len(text)), 0, -1):  # the start of a path's prefix
                if self.prefix.startswith(text[-size:]):
                    cut = len(text) - size
                    break
        self._pending = text[cut:]
        return self.text(text[:cut])

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return self.text(text)
