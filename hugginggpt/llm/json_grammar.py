"""A llama.cpp grammar (GBNF) for a JSON schema, with JSON Schema 2020-12's ``prefixItems`` followed by
``items`` (a first element of one shape, then elements of another), which llama-cpp-python's own converter
reads as a fixed-length tuple.

The planner holds a plan's first task to tasks that read only what the request gives (a task at position 0
has no earlier result to read): ``{"prefixItems": [first], "items": next, "maxItems": n}``. Everything else
is llama-cpp-python's converter (``llama_cpp.llama_grammar.SchemaConverter``), so grammars of schemas
without that pair are the ones llama-cpp-python makes.

Every structured answer of the embedded model decodes under ``schema_llama_grammar(schema)``: made once
per schema (an LRU keyed by the schema's JSON, key order kept: it is the grammar's property order), where
llama-cpp-python converts the response format's schema again on every call (docs/PERFORMANCE.md). A
``LlamaGrammar`` (llama-cpp-python 0.3) holds only the GBNF text: llama.cpp parses it into a fresh grammar
sampler, with its own state, for each completion, so one object serves every call and thread.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import Any


@cache
def _converter_class() -> type:
    from llama_cpp.llama_grammar import SchemaConverter

    class Converter(SchemaConverter):
        """llama-cpp-python's converter, reading ``prefixItems`` with ``items`` as JSON Schema does."""

        def visit(self, schema: dict[str, Any], name: str) -> str:
            prefix, items = schema.get("prefixItems"), schema.get("items")
            if not (isinstance(prefix, list) and prefix and isinstance(items, dict)):
                return super().visit(schema, name)
            base = f"{name}{'-' if name else ''}"
            heads = [self.visit(item, f"{base}tuple-{i}") for i, item in enumerate(prefix)]
            item = self.visit(items, f"{base}item")
            max_items = schema.get("maxItems")
            more = None if max_items is None else max(0, int(max_items) - len(heads))
            if more is None:
                tail = f'("," space {item})*'
            else:
                tail = "".join(f'("," space {item} ' for _ in range(more)) + ")?" * more
            body = tail
            # the prefix's elements are optional from the right: [], [a], [a, b], then the items
            for position, head in reversed(list(enumerate(heads))):
                if max_items is not None and position >= int(max_items):
                    continue
                separator = '"," space ' if position else ""
                body = f"({separator}{head} {body})?"
            return self._add_rule(name or "root", f'"[" space {body} "]" space')

    return Converter


@lru_cache(maxsize=64)
def _grammar_text(schema_json: str) -> str:
    converter = _converter_class()(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(json.loads(schema_json), "stdin")
    converter.visit(schema, "")
    return converter.format_grammar()


def needs_own_grammar(schema: Any) -> bool:
    """Whether ``schema`` holds an array with ``prefixItems`` and ``items``, which llama-cpp-python's converter
    would read as a fixed tuple."""
    if isinstance(schema, dict):
        if isinstance(schema.get("prefixItems"), list) and isinstance(schema.get("items"), dict):
            return True
        return any(needs_own_grammar(value) for value in schema.values())
    if isinstance(schema, list):
        return any(needs_own_grammar(value) for value in schema)
    return False


def schema_grammar(schema: dict[str, Any]) -> str:
    """The GBNF text of ``schema`` (cached by the schema's JSON)."""
    return _grammar_text(_key(schema))


def schema_llama_grammar(schema: dict[str, Any]) -> Any:
    """The ``llama_cpp.LlamaGrammar`` of ``schema``, made once per schema (cached by the schema's JSON)."""
    return _llama_grammar(_key(schema))


def _key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, ensure_ascii=False)  # not sorted: key order is property order


@lru_cache(maxsize=64)
def _llama_grammar(schema_json: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(_grammar_text(schema_json), verbose=False)
