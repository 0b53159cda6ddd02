"""One call of the controller LLM by an agent stage: timed, recorded in the trace, failing one way.

Every stage that asks the controller goes through ``acall_llm``: the response, model selection, the
critic, and each turn of the ReAct and function-calling agents. It times the call, records it in the
run's trace (stage, prompt, answer, usage, seconds, ``finish_reason``, the token bound; a failed call
with its error line), and turns any failure of the model into ``LLMError("<stage>: the LLM call failed: <error line>")``.
This library's own errors and LangGraph's control-flow exceptions pass through unchanged. What a
stage does with a failure is its own decision: selection falls back to the top candidates, the
critic gives no verdict, the other stages stop the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hugginggpt.agent.trace import Trace
from hugginggpt.errors import HuggingGPTError, LLMError, error_line
from hugginggpt.llm.content import content_text, cut_off, finish_reason


@dataclass
class LLMReply:
    """What one LLM call answered."""

    message: Any
    """The model's message (an ``AIMessage``; None when a constrained call returned none)."""
    parsed: Any
    """The answer held to a JSON schema (a constrained call's ``parsed``), else None."""
    text: str
    """The message's text."""
    seconds: float

    @property
    def finish_reason(self) -> str | None:
        """Why the answer ended, as the provider said (``stop``, ``length``, ``tool_calls``...)."""
        return finish_reason(self.message)

    @property
    def cut_off(self) -> bool:
        """Whether the answer stopped at the model's token limit."""
        return cut_off(self.message)


async def acall_llm(stage: str, call: Awaitable[Any], prompt: Any, *, trace: Trace | None = None,
                    max_tokens: int | None = None) -> LLMReply:
    """Await ``call`` (an LLM's ``ainvoke(prompt, config)``, plain or constrained) as stage ``stage``.

    A constrained LLM's answer (``{"raw", "parsed", ...}``) is read as its raw message and parsed
    value. The call is recorded in ``trace`` under ``stage`` with ``prompt``: the answer's text (the
    message itself when it calls tools, the parsed value when the text is empty) and ``max_tokens``,
    the answer bound the caller gave the LLM (``llm/token_limits.py``). Raises ``LLMError`` when the
    model fails.
    """
    started = time.perf_counter()
    with _failing_as_llm_error(stage, prompt, started, trace, max_tokens):
        answer = await call
    message, parsed = answer, None
    if isinstance(answer, dict) and "raw" in answer:
        message, parsed = answer.get("raw"), answer.get("parsed")
    return _replied(stage, prompt, message, parsed, started, trace, max_tokens)


async def astream_llm(stage: str, chunks: AsyncIterator[Any], prompt: Any, *, trace: Trace | None = None,
                      max_tokens: int | None = None) -> AsyncIterator[str | LLMReply]:
    """``acall_llm`` for a streamed answer (an LLM's ``astream(prompt, config)``): yields each chunk's
    text as it comes, then the ``LLMReply`` of the whole answer (the chunks added up), recorded and
    failing as ``acall_llm`` records and fails. A model that cannot stream gives one chunk."""
    started = time.perf_counter()
    message = None
    with _failing_as_llm_error(stage, prompt, started, trace, max_tokens):
        async for chunk in chunks:
            message = chunk if message is None else message + chunk
            text = content_text(chunk)
            if text:
                yield text
    yield _replied(stage, prompt, message, None, started, trace, max_tokens)


@contextmanager
def _failing_as_llm_error(stage: str, prompt: Any, started: float, trace: Trace | None,
                          max_tokens: int | None) -> Iterator[None]:
    """What a failed call raises: our own errors and LangGraph's control flow as they are, any other
    failure as ``LLMError`` (recorded in the trace with its error line)."""
    try:
        yield
    except Exception as error:
        if isinstance(error, HuggingGPTError) or bubbles_up(error):
            raise
        line = error_line(error)
        if trace is not None:
            trace.add_llm_call(stage, prompt, "", seconds=round(time.perf_counter() - started, 6),
                               max_tokens=max_tokens, error=line)
        raise LLMError(f"{stage}: the LLM call failed: {line}") from error


def _replied(stage: str, prompt: Any, message: Any, parsed: Any, started: float, trace: Trace | None,
             max_tokens: int | None) -> LLMReply:
    reply = LLMReply(message, parsed, content_text(message), round(time.perf_counter() - started, 6))
    if trace is not None:
        output: Any = reply.text
        if getattr(message, "tool_calls", None):
            output = message
        elif not output and parsed is not None:
            output = json.dumps(parsed, ensure_ascii=False, default=str)
        trace.add_llm_call(stage, prompt, output, getattr(message, "usage_metadata", None), reply.seconds,
                           reply.finish_reason, max_tokens=max_tokens)
    return reply


def bubbles_up(error: BaseException) -> bool:
    """Whether ``error`` is LangGraph's control flow (an interrupt), which passes through an agent untouched."""
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - langgraph comes with langchain
        return False
    return isinstance(error, GraphBubbleUp)
