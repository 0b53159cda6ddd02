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
    """Taking the conversion over changes no grammar but its spacing: without ``prefixItems`` then ``items`` the
    text is the one llama-cpp-python made from the response format (here the task table's plan schema)."""
    from hugginggpt.agent.plan.parse import plan_schema

    for schema in (PLAIN, plan_schema(task_table())):
        assert not json_grammar.needs_own_grammar(schema)
        assert json_grammar.schema_grammar(schema) == json_grammar.one_spacing(
            llama_grammar.json_schema_to_gbnf(json.dumps(schema)))
    assert json_grammar.schema_grammar(PREFIX_THEN_ITEMS) != llama_grammar.json_schema_to_gbnf(
        json.dumps(PREFIX_THEN_ITEMS))


# ----- an array whose elements follow states (``ITEM_STATES``), checked by llama.cpp's own grammar engine

#: Words then numbers: a word may follow a word, and after the first number only numbers come; "stop" ends it.
STATES = {"type": "array", "maxItems": 3, json_grammar.ITEM_STATES: {
    "start": "words",
    "items": [{"type": "string", "enum": ["a", "b"]}, {"type": "integer"}, {"type": "string", "enum": ["stop"]}],
    "states": {"words": [[0, "words"], [1, "numbers"], [2, "end"]], "numbers": [[1, "numbers"], [2, "end"]],
               "end": []}}}


@pytest.fixture(scope="module")
def vocab():
    """A real tokenizer (SmolLM2-135M's vocabulary only: no weights are loaded)."""
    from llama_cpp import Llama

    from tests.shared import gguf_or_skip

    return Llama(model_path=gguf_or_skip("smollm2-135m"), vocab_only=True, verbose=False)


def accepts(llama, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar engine lets ``text`` be written, token by token, and then end."""
    import ctypes
    import math

    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, grammar.encode(), b"root")
    one = (llama_cpp.llama_token_data * 1)()
    try:
        for token in [*llama.tokenize(text.encode(), add_bos=False, special=False), llama.token_eos()]:
            one[0].id, one[0].logit, one[0].p = token, 0.0, 0.0
            candidates = llama_cpp.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            if math.isinf(one[0].logit):
                return False
            if token != llama.token_eos():
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


@pytest.mark.parametrize("text, allowed", [
    ("[]", True), ('["a", "b", 3]', True), ("[1, 2]", True), ('["a", "stop"]', True),
    ('[1, "a"]', False),  # a word after a number
    ('["stop", "a"]', False), ('["stop", 1]', False),  # nothing after "stop"
    ('["a", "a", "a", "a"]', False),  # at most three
    ('["c"]', False),
])
def test_array_elements_follow_their_states(vocab, text, allowed):
    """(``json.dumps``'s spacing, the one the grammar writes.)"""
    assert json_grammar.needs_own_grammar(STATES)
    assert accepts(vocab, json_grammar.schema_grammar(STATES), text) is allowed


def test_a_plan_grammar_follows_what_earlier_tasks_make(vocab):
    """The planner's schema for "make a video and dub it" (no file given): a transcription of the video cannot
    be written, speech of a text can, and a transcription once speech was made."""
    from hugginggpt.agent.plan.context import request_inputs
    from hugginggpt.agent.plan.parse import plan_schema

    tasks = {name: task_table()[name] for name in ("text-to-video", "text-to-speech", "automatic-speech-recognition")}
    grammar = json_grammar.schema_grammar(plan_schema(tasks, request_inputs("make a video of a comet and dub it")))

    def plan(*steps):
        return json.dumps({"tasks": [{"step": "s", "task": t, "id": i, "args": a} for i, (t, a) in enumerate(steps)]})

    video = ("text-to-video", {"text": "a comet"})
    assert accepts(vocab, grammar, plan(video, ("text-to-speech", {"text": "a comet"})))
    assert not accepts(vocab, grammar, plan(video, ("automatic-speech-recognition", {"audio": "<resource>-0"})))
    assert accepts(vocab, grammar, plan(("text-to-speech", {"text": "hi"}),
                                        ("automatic-speech-recognition", {"audio": "<resource>-0"})))


@pytest.mark.parametrize("text, allowed", [
    ('{"word": "a", "n": [1, 2]}', True),  # json.dumps's spacing: the prompts' examples are written so
    ('{"word":"a","n":[1,2]}', False), ('{ "word": "a", "n": [1, 2] }', False), ('{"word": "a",\n "n": [1]}', False),
])
def test_the_json_is_spaced_one_way(vocab, text, allowed):
    """One space after each comma and colon, none elsewhere: the text between two free values is then fixed, and
    ``jump_forward.py`` decodes it in one batch."""
    schema = {"type": "object", "required": ["word", "n"],
              "properties": {"word": {"type": "string"}, "n": {"type": "array", "items": {"type": "integer"}}}}
    assert accepts(vocab, json_grammar.schema_grammar(schema), text) is allowed
    assert json_grammar.one_spacing("root ::= [a-z]") == "root ::= [a-z]"  # a grammar without the converter's spaces
