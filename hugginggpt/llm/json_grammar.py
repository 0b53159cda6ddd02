"""A llama.cpp grammar (GBNF) for a JSON schema, with JSON Schema 2020-12's ``prefixItems`` followed by
``items`` (a first element of one shape, then elements of another), which llama-cpp-python's own converter
reads as a fixed-length tuple.

The planner holds a plan's first task to tasks that read only what the request gives (a task at position 0
has no earlier result to read): ``{"prefixItems": [first], "items": next, "maxItems": n}``. An array may
also carry ``"x-item-states"`` (``ITEM_STATES``): its elements are then chosen by a finite state machine, each
element's schema naming the state the next element is chosen in (``{"start": S, "items": [schema, ...],
"states": {S: [[item index, next state], ...]}}``); the planner uses it to hold each task to the kinds of
input that the request and the tasks before it give. JSON Schema has no such keyword: a validator ignores
it, and the array's standard keywords say what it allows in general. Everything else is llama-cpp-python's
converter (``llama_cpp.llama_grammar.SchemaConverter``), so grammars of schemas
without that pair are the ones llama-cpp-python makes, spaced one way (``one_spacing``).

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

ITEM_STATES = "x-item-states"
"""The keyword of an array whose elements follow a finite state machine (this module's docstring)."""


@cache
def _converter_class() -> type:
    from llama_cpp.llama_grammar import SchemaConverter

    class Converter(SchemaConverter):
        """llama-cpp-python's converter, reading ``prefixItems`` with ``items`` as JSON Schema does."""

        def visit(self, schema: dict[str, Any], name: str) -> str:
            if isinstance(schema, dict) and isinstance(schema.get(ITEM_STATES), dict):
                return self._item_states(schema[ITEM_STATES], schema.get("maxItems"), name)
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

        def _item_states(self, flow: dict[str, Any], max_items: Any, name: str) -> str:
            """An array whose elements follow ``flow``'s states (``ITEM_STATES``), at most ``max_items`` of them."""
            base = f"{name}{'-' if name else ''}"
            items = [self.visit(item, f"{base}item-{i}") for i, item in enumerate(flow["items"])]
            states: dict[str, list[Any]] = flow["states"]
            number = {state: i for i, state in enumerate(states)}
            picks: dict[tuple[str, str], str] = {}

            def pick(state: str, after: str, chosen: list[int]) -> str:
                # one element of those chosen in ``state`` after which the next is chosen in ``after``
                if (state, after) not in picks:
                    body = " | ".join(dict.fromkeys(items[i] for i in chosen))
                    picks[state, after] = self._add_rule(f"{base}s{number[state]}-to-s{number[after]}", body)
                return picks[state, after]

            made: dict[tuple[str, int | None], str | None] = {}

            def elements(state: str, left: int | None) -> str | None:
                # one element chosen in ``state``, then at most ``left - 1`` more (None: no bound)
                if (state, left) in made:
                    return made[state, left]
                options: dict[str, list[int]] = {}
                for index, after in states.get(state, ()):
                    options.setdefault(after, []).append(index)
                if not options or left == 0:
                    made[state, left] = None
                    return None
                key = f"{base}s{number[state]}" + ("" if left is None else f"-{left}")
                made[state, left] = key  # a recursive reference (no bound) finds the rule by its name
                rest = None if left is None else left - 1
                alternatives = []
                for after, chosen in options.items():
                    more = elements(after, rest) if rest != 0 else None
                    tail = f' ("," space {more})?' if more else ""
                    alternatives.append(f"{pick(state, after, chosen)}{tail}")
                made[state, left] = self._add_rule(key, " | ".join(alternatives))
                return made[state, left]

            bound = None if max_items is None else max(0, int(max_items))
            first = elements(flow["start"], bound)
            body = f"({first})? " if first else ""
            return self._add_rule(name or "root", f'"[" space {body}"]" space')

    return Converter


@lru_cache(maxsize=64)
def _grammar_text(schema_json: str) -> str:
    converter = _converter_class()(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(json.loads(schema_json), "stdin")
    converter.visit(schema, "")
    return one_spacing(converter.format_grammar())


#: llama-cpp-python's converter lets an optional space follow every ``{``, ``[``, ``,``, ``:`` and value. The JSON
#: is written as ``json.dumps`` writes it (the layout of the prompts' examples, which the model follows): one space
#: after ``,`` and ``:``, none elsewhere. The text the grammar forces is then one string (``jump_forward.py``).
_SPACED = {'"," space': '", "', '":" space': '": "', '"{" space': '"{"', '"[" space': '"["'}
_SPACE_RULE = 'space ::= " "?'


def one_spacing(grammar: str) -> str:
    """``grammar`` (the converter's GBNF) with its JSON spaced one way: ``{"a": [1, 2]}``."""
    lines = grammar.splitlines()
    if _SPACE_RULE not in lines:
        return grammar
    text = "\n".join('space ::= ""' if line == _SPACE_RULE else line for line in lines)
    for spaced, one in _SPACED.items():
        text = text.replace(spaced, one)
    return text + "\n"


def needs_own_grammar(schema: Any) -> bool:
    """Whether ``schema`` holds an array with ``prefixItems`` and ``items``, which llama-cpp-python's converter
    would read as a fixed tuple, or with ``ITEM_STATES``, which it does not know."""
    if isinstance(schema, dict):
        if isinstance(schema.get("prefixItems"), list) and isinstance(schema.get("items"), dict):
            return True
        if isinstance(schema.get(ITEM_STATES), dict):
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
