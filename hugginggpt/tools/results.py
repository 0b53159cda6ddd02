"""The result envelope every task returns, and what a ``<resource>-N`` reference to it stands for.

An envelope is a JSON-serialisable dict whose keys are output kinds: ``text`` (a short rendering),
``image``/``audio``/``video`` (absolute paths of files in the run's workspace) and ``data``
(structured output). Keeping it plain JSON lets traces, prompts and agents share it unchanged.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hugginggpt.errors import ResourceError
from hugginggpt.tools.table import MEDIA_KINDS, OUTPUT_KINDS



def envelope(
    *,
    text: str | None = None,
    image: str | Path | None = None,
    audio: str | Path | None = None,
    video: str | Path | None = None,
    data: Any = None,
    task: str | None = None,
) -> dict[str, Any]:
    """Build a result envelope, checking that it is non-empty and JSON data (``task`` names errors)."""
    result: dict[str, Any] = {}
    if text is not None:
        result["text"] = str(text)
    for kind, path in (("image", image), ("audio", audio), ("video", video)):
        if path is not None:
            result[kind] = str(Path(path).absolute())
    if data is not None:
        result["data"] = data
    check_envelope(result, task=task)
    return result


def check_envelope(result: Any, *, task: str | None = None) -> dict[str, Any]:
    """Raise ``ResourceError`` unless ``result`` is a valid envelope; return it unchanged."""
    if not isinstance(result, dict) or not result:
        raise ResourceError(task, "a task result must be a non-empty dict of outputs")
    unknown = [key for key in result if key not in OUTPUT_KINDS]
    if unknown:
        raise ResourceError(task, f"unknown result keys {unknown} (allowed: {', '.join(OUTPUT_KINDS)})")
    for kind in MEDIA_KINDS:
        if kind in result and not (isinstance(result[kind], str) and Path(result[kind]).is_absolute()):
            raise ResourceError(task, f"result {kind!r} must be an absolute file path, got {result[kind]!r}")
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ResourceError(task, f"the result is not JSON data: {exc}") from None
    return result


def resource_value(result: dict[str, Any], kind: str) -> str:
    """What ``<resource>-N`` stands for in an argument of ``kind``, given task N's envelope.

    Media kinds get the produced file's path. Every other kind gets text: the envelope's ``text``,
    else its ``data`` as compact JSON.
    """
    if kind in MEDIA_KINDS:
        if kind in result:
            return result[kind]
        raise ResourceError(None, f"the referenced result has no {kind} output (it has: {', '.join(result) or 'nothing'})")
    if "text" in result:
        return result["text"]
    if "data" in result:
        return json.dumps(result["data"], separators=(",", ":"), ensure_ascii=False)
    raise ResourceError(None, f"the referenced result has no text output for a {kind} argument (it has: {', '.join(result) or 'nothing'})")


def summarize(result: dict[str, Any], limit: int = 500) -> str:
    """A short text of a result for prompts: files by path, long data shortened (e.g. embeddings)."""
    parts = []
    if "text" in result:
        parts.append(f"text: {_clip(str(result['text']), limit)}")
    for kind in MEDIA_KINDS:
        if kind in result:
            parts.append(f"{kind}: {result[kind]}")
    if "data" in result:
        data_text = json.dumps(_shorten(result["data"]), ensure_ascii=False, separators=(",", ":"))
        parts.append(f"data: {_clip(data_text, limit)}")
    return "; ".join(parts)


def _shorten(value: Any, max_items: int = 8, depth: int = 0) -> Any:
    """Cut long lists (keeping a count) and round floats, so vectors do not flood a prompt."""
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {k: _shorten(v, max_items, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if depth > 3:
            return f"[{len(value)} items]"
        head = [_shorten(v, max_items, depth + 1) for v in value[:max_items]]
        if len(value) > max_items:
            head.append(f"... {len(value) - max_items} more")
        return head
    return value


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a marker that says how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut]"


def clip_values(value: Any, limit: int) -> Any:
    """``value`` (strings, lists, dicts) with every string longer than ``limit`` cut by ``clip``."""
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, dict):
        return {k: clip_values(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clip_values(v, limit) for v in value]
    return value
