"""One LLM call held to the answer tokens it can need.

A weak controller can write until its context is full (a small model repeating a plan for minutes,
holding the one embedded model while every other request waits). Each stage knows how long its answer
can be (a plan follows from the schema's task limit, a selection from its tasks, a turn from its
protocol) and asks for at most that:

- ``bounded(llm, n)``: the chat model answering at most ``n`` tokens per call (the smaller of its own
  limit and ``n``). It is a chat model like the original (a copy sharing its client and, for the
  embedded model, its loaded weights), so ``with_structured_output``, ``bind_tools`` and ``bind`` on it
  keep the bound. A model without a ``max_tokens`` setting is returned as it is.
- ``token_limit(llm)``: the bound a model's calls have (None: unbounded or unknown).

The embedded llama.cpp model also takes ``max_tokens`` per call (``invoke(..., max_tokens=n)``,
``bind(max_tokens=n)``, ``with_structured_output(schema, max_tokens=n)``), again the smaller of its
own and the call's. An answer cut at the bound says ``finish_reason="length"``
(``llm/content.finish_reason``), which the trace and the ``llm_cut_off`` stage event show.
"""

from __future__ import annotations

from typing import Any

#: Answer bounds of the stages that are not planning (planning's follows from its schema).
RESPONSE_MAX_TOKENS = 768
"""The response stage: a direct answer, then what was done, with the files' paths."""
TURN_MAX_TOKENS = 1024
"""One turn of the ReAct and function-calling agents: a thought and one action with its arguments
(which may copy a passage of the request), or the final answer."""
SELECTION_BASE_TOKENS = 32
SELECTION_TOKENS_PER_TASK = 80
"""Model selection: per task an id from the candidate list and a one-sentence reason."""


def selection_max_tokens(tasks: int) -> int:
    """The answer bound of a model-selection call choosing for ``tasks`` tasks."""
    return SELECTION_BASE_TOKENS + SELECTION_TOKENS_PER_TASK * max(tasks, 1)


def declared_fields(llm: Any) -> dict[str, Any]:
    """The fields ``llm``'s class declares (a pydantic chat model's settings); empty for other objects."""
    fields = getattr(type(llm), "model_fields", None)
    return fields if isinstance(fields, dict) else {}


def token_limit(llm: Any) -> int | None:
    """The most answer tokens one call of ``llm`` may write (its ``max_tokens``), None when unbounded."""
    value = getattr(llm, "max_tokens", None) if "max_tokens" in declared_fields(llm) else None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def bounded(llm: Any, max_tokens: int) -> Any:
    """``llm`` answering at most ``max_tokens`` tokens per call; see the module docstring."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if "max_tokens" not in declared_fields(llm):
        return llm
    own = token_limit(llm)
    if own is not None and own <= max_tokens:
        return llm
    return llm.model_copy(update={"max_tokens": max_tokens})
