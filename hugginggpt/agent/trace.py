"""The JSON trace of one agent run: everything needed to explain its decisions afterwards.

Written atomically (temporary file + rename), so a reader never sees half a trace, also when a run
is cancelled. Secrets (API keys, tokens) are redacted before anything reaches disk.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from hugginggpt.redact import is_secret_key, redact
from hugginggpt.tools.results import clip

#: Longer strings are cut in the trace, with a marker that says how much; the run itself saw the whole value.
TRACE_TEXT_CHARS = 100_000


def _trace_text(text: str) -> str:
    text = redact(text)  # first: a cut must not leave half a secret unrecognised
    return text if len(text) <= TRACE_TEXT_CHARS else clip(text, TRACE_TEXT_CHARS)


def clean(value: Any) -> Any:
    """``value`` as strict JSON data with secrets redacted (strings, and string values under
    secret-like keys), in one walk: messages, paths, pydantic models and sets converted, other
    objects as their repr.

    Non-finite floats become strings ("NaN", "Infinity"): strict JSON readers reject the bare tokens.
    """
    kind = type(value)  # exact types first: a trace is mostly these, and ``isinstance`` chains cost
    if kind is str:
        return _trace_text(value)
    if kind is dict:
        return _clean_dict(value)
    if kind is list:
        return [clean(item) for item in value]
    if value is None or kind is int or kind is bool:
        return value
    return _clean_other(value)


def _clean_dict(value: dict) -> dict[str, Any]:
    cleaned = {}
    for key, item in value.items():
        key = key if type(key) is str else str(key)
        item = clean(item)
        cleaned[key] = "***" if type(item) is str and item and is_secret_key(key) else item
    return cleaned


def _clean_other(value: Any) -> Any:
    """``clean`` for floats, subclasses of the JSON types, and what JSON has no type for."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return _trace_text(value)
    if isinstance(value, int):
        return value
    if isinstance(value, dict):
        return _clean_dict(value)
    if isinstance(value, (list, tuple, set)):
        return [clean(item) for item in value]
    if isinstance(value, Path):
        return _trace_text(str(value))
    if hasattr(value, "model_dump"):
        return clean(value.model_dump())
    return _trace_text(repr(value))


def serialise(data: dict[str, Any]) -> str:
    """``data`` as the trace's JSON text: strict JSON, secrets redacted, one top-level key per line
    (readable, and the C encoder: ``indent`` forces the slow Python one)."""
    cleaned = clean(data)
    return "{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False, allow_nan=False)}"
                               for k, v in cleaned.items()) + "\n}\n"


class Trace:
    """Collects the record of one run and writes it as JSON to ``path``."""

    def __init__(self, path: str | Path, **header: Any):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._started = time.perf_counter()
        self.data: dict[str, Any] = {
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **header,
            "llm_calls": [],
            "events": [],
            "timings": {},
        }

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            self.data[key] = value

    def setdefault(self, key: str, value: Any) -> None:
        """Set ``key`` unless the trace has it already."""
        with self._lock:
            self.data.setdefault(key, value)

    def event(self, name: str, *, record: bool = True, **fields: Any) -> dict[str, Any]:
        """A stage event with the time since the run started, recorded unless ``record`` is false
        (the response's text pieces: the trace keeps the whole answer instead)."""
        event = {"event": name, "t": round(time.perf_counter() - self._started, 6), **fields}
        if record:
            with self._lock:
                self.data["events"].append(event)
        return event

    def add_llm_call(self, stage: str, prompt: Any, output: Any, usage: dict | None = None,
                     seconds: float | None = None, finish_reason: str | None = None,
                     max_tokens: int | None = None, error: str | None = None) -> None:
        """One LLM call; ``finish_reason``: why the answer ended (``length``: cut off at the token limit,
        ``repetition``: stopped repeating itself); ``max_tokens``: the bound the call was given; ``error``:
        why a failed call gave no answer (``agent/llm_call.py`` records every call)."""
        call = {"stage": stage, "prompt": prompt, "output": output, "usage": usage or {}, "seconds": seconds,
                "finish_reason": finish_reason}
        if max_tokens is not None:
            call["max_tokens"] = max_tokens
        if error is not None:
            call["error"] = error
        with self._lock:
            self.data["llm_calls"].append(call)

    def llm_calls(self, start: int = 0) -> list[dict[str, Any]]:
        """The LLM calls recorded so far, from the ``start``-th on."""
        with self._lock:
            return list(self.data["llm_calls"][start:])

    def timing(self, stage: str, seconds: float) -> None:
        with self._lock:
            self.data["timings"][stage] = round(self.data["timings"].get(stage, 0.0) + seconds, 6)

    def write(self) -> Path:
        """Write the trace atomically and return its path."""
        with self._lock:
            self.data["elapsed_s"] = round(time.perf_counter() - self._started, 6)
            payload = serialise(self.data)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trace-", suffix=".tmp")
        try:
            # A lone surrogate (a model can write one) is not UTF-8: written as its JSON escape it reads back as is.
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(payload)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return self.path


class UsageCounter(BaseCallbackHandler):
    """Counts LLM calls and tokens of a run through LangChain callbacks (works for any chat model)."""

    # Called in the event loop's thread rather than a thread pool: it only adds numbers under a lock.
    run_inline = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.llm_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._seen: set[UUID] = set()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        prompt = completion = 0
        for generations in response.generations:
            for gen in generations:
                usage = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
                prompt += int(usage.get("input_tokens", 0) or 0)
                completion += int(usage.get("output_tokens", 0) or 0)
        if not (prompt or completion) and response.llm_output:
            usage = response.llm_output.get("token_usage") or response.llm_output.get("usage") or {}
            prompt = int(usage.get("prompt_tokens", 0) or 0)
            completion = int(usage.get("completion_tokens", 0) or 0)
        with self._lock:
            if run_id in self._seen:
                return
            self._seen.add(run_id)
            self.llm_calls += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def as_dict(self) -> dict[str, int]:
        return {
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
