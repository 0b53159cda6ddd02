"""Constrained output: an LLM held to one JSON schema, and the per-agent cache of such LLMs.

LangChain's ``with_structured_output(schema, method="json_schema", include_raw=True)`` is the one way
in; models that cannot do it answer in free text, which the stages read with ``llm/json_text.py``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.errors import LLMError
from hugginggpt.llm.token_limits import bounded

Structured = bool | Literal["auto"]
"""``True``: constrain or fail; ``False``: never constrain; ``"auto"``: constrain when the model can."""


def structured_runnable(llm: BaseChatModel, schema: dict[str, Any], mode: Structured,
                        max_tokens: int | None = None) -> Any | None:
    """``llm`` constrained to ``schema`` (answering at most ``max_tokens`` tokens: ``token_limits.bounded``),
    or None when the model cannot do structured output."""
    if mode is False:
        return None
    if max_tokens is not None:
        llm = bounded(llm, max_tokens)
    try:
        return llm.with_structured_output(schema, method="json_schema", include_raw=True)
    except NotImplementedError:
        if mode is True:
            raise LLMError(f"{type(llm).__name__} does not support structured output") from None
        return None


def exact_schemas(llm: Any) -> bool:
    """Whether ``llm``'s structured output is decoded under a grammar of the whole JSON schema (the
    embedded llama.cpp model), so that a schema made for one request (the files it gives) holds the
    answer exactly; hosted providers take a subset of JSON Schema, and get the general schema."""
    return bool(getattr(llm, "grammar_schemas", False))


class StructuredLLM:
    """An LLM constrained to one JSON schema: LangChain's ``with_structured_output(..., include_raw=True)``
    chain, whose ``ainvoke`` answers ``{"raw", "parsed", "parsing_error"}``."""

    def __init__(self, chain: Any):
        self.chain = chain

    async def ainvoke(self, messages: list[BaseMessage], config: RunnableConfig) -> dict[str, Any]:
        return await self.chain.ainvoke(messages, config)


class ConstrainedCache:
    """The LLM constrained to each schema, built once per agent: ``with_structured_output`` builds
    new pydantic models every time (milliseconds), and the same schemas recur run after run."""

    def __init__(self, llm: BaseChatModel, structured: Structured, size: int = 32):
        self.llm = llm
        self.structured = structured
        self.size = size
        self._entries: OrderedDict[Hashable, StructuredLLM | None] = OrderedDict()

    def serves(self, llm: BaseChatModel, structured: Structured) -> bool:
        """Whether this cache was built for ``llm`` in ``structured`` mode."""
        return self.llm is llm and self.structured == structured

    def get(self, schema: dict[str, Any] | Callable[[], dict[str, Any]],
            key: Hashable | None = None, *, max_tokens: int | None = None) -> StructuredLLM | None:
        """The constrained LLM for ``schema`` (None: the model has no structured output), answering at
        most ``max_tokens`` tokens per call when given (``token_limits.bounded``).

        With ``key`` (what the schema is built from), ``schema`` may be a function that builds it,
        called only on a miss; without, the schema's JSON is the key.
        """
        if key is None:
            key = json.dumps(schema, sort_keys=True)
        key = (key, max_tokens)
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        chain = structured_runnable(self.llm, schema() if callable(schema) else schema, self.structured, max_tokens)
        entry = StructuredLLM(chain) if chain is not None else None
        self._entries[key] = entry
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return entry
