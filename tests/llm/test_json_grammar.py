"""The embedded model's grammar of a structured answer is made once per schema (``llm/json_grammar.py``):
repeated calls with the same schema convert and wrap it once, and hand llama.cpp the same grammar. No
model is loaded: a stand-in ``Llama`` records what each completion was given."""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("llama_cpp")

from llama_cpp import llama_grammar  # noqa: E402

from hugginggpt.llm import json_grammar  # noqa: E402
from hugginggpt.llm.llamacpp import LlamaCppChatModel  # noqa: E402
from hugginggpt.tools.table import task_table  # noqa: E402

#: llama-cpp-python's converter would read this array as a fixed tuple of one element (our own grammar's case).
PREFIX_THEN_ITEMS = {"type": "object", "properties": {"tasks": {
    "type": "array", "prefixItems": [{"type": "string", "enum": ["first"]}], "items": {"type": "string"},
    "maxItems": 3}}, "required": ["tasks"]}
PLAIN = {"type": "object", "properties": {"answer": {"type": "string"}, "score": {"type": "number"}},
         "required": ["answer", "score"]}


class FakeLlama:
    """What ``LlamaCppChatModel`` reads of a ``llama_cpp.Llama``, answering ``{}`` to every completion."""

    chat_format, chat_handler, metadata = "chatml", None, {}

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def create_chat_completion(self, messages, **params):
        self.calls.append(params)
        return {"choices": [{"message": {"content": '{"answer": "a", "score": 1}'}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 5}}


@pytest.fixture
def counted(monkeypatch):
    """Conversions of a schema to GBNF (ours and llama-cpp-python's share ``format_grammar``) and
    ``LlamaGrammar`` objects made, from empty caches."""
    json_grammar._grammar_text.cache_clear()
    json_grammar._llama_grammar.cache_clear()
    counts = {"converted": 0, "wrapped": 0}
    format_grammar = llama_grammar.SchemaConverter.format_grammar
    from_string = llama_grammar.LlamaGrammar.from_string.__func__

    def counting_format(self):
        counts["converted"] += 1
        return format_grammar(self)

    def counting_from_string(cls, grammar, verbose=True):
        counts["wrapped"] += 1
        return from_string(cls, grammar, verbose)

    monkeypatch.setattr(llama_grammar.SchemaConverter, "format_grammar", counting_format)
    monkeypatch.setattr(llama_grammar.LlamaGrammar, "from_string", classmethod(counting_from_string))
    yield counts
    json_grammar._grammar_text.cache_clear()
    json_grammar._llama_grammar.cache_clear()


@pytest.fixture
def model(monkeypatch):
    llama = FakeLlama()
    monkeypatch.setattr(LlamaCppChatModel, "_client", lambda self: (llama, threading.Lock()))
    return LlamaCppChatModel(model_path="stand-in.gguf", stop_repetition=False), llama


@pytest.mark.parametrize("schema", [PREFIX_THEN_ITEMS, PLAIN], ids=["prefix-then-items", "plain"])
def test_repeated_calls_with_one_schema_convert_it_once(schema, counted, model):
    llm, llama = model
    for _ in range(3):  # an equal schema built anew each time, as a planner builds one per request
        llm.with_structured_output(json.loads(json.dumps(schema))).invoke("Answer.")
    assert counted == {"converted": 1, "wrapped": 1}
    grammars = [call.get("grammar") for call in llama.calls]
    assert grammars[0] is not None and all(grammar is grammars[0] for grammar in grammars)
    assert all("response_format" not in call for call in llama.calls)  # llama-cpp-python converts nothing
    assert grammars[0]._grammar == json_grammar.schema_grammar(schema)


def test_another_schema_gets_its_own_grammar(counted, model):
    llm, llama = model
    for schema in (PLAIN, PREFIX_THEN_ITEMS, PLAIN):
        llm.with_structured_output(schema).invoke("Answer.")
    assert counted == {"converted": 2, "wrapped": 2}
    assert llama.calls[0]["grammar"] is llama.calls[2]["grammar"] is not llama.calls[1]["grammar"]


def test_a_schema_without_the_pair_gets_llama_cpp_python_s_own_grammar():
    """Taking the conversion over changes no grammar: without ``prefixItems`` then ``items`` the text is
    the one llama-cpp-python made from the response format (here the task table's plan schema)."""
    from hugginggpt.agent.plan.parse import plan_schema

    for schema in (PLAIN, plan_schema(task_table())):
        assert not json_grammar.needs_own_grammar(schema)
        assert json_grammar.schema_grammar(schema) == llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    assert json_grammar.schema_grammar(PREFIX_THEN_ITEMS) != llama_grammar.json_schema_to_gbnf(
        json.dumps(PREFIX_THEN_ITEMS))
