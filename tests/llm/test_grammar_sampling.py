"""Grammar-constrained sampling that checks only the drawn token (``llm/grammar_sampling.py``), on the real
SmolLM2-135M GGUF: it keeps the answer inside the grammar, redraws when the model wants a token the grammar
forbids, and under greedy decoding picks exactly the tokens llama-cpp-python's grammar-first chain picks."""

from __future__ import annotations

import json

import pytest

from hugginggpt.llm.grammar_sampling import GrammarCheckedSampler
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from tests.shared import gguf_or_skip

#: A value no model writes on its own after "Say hello" (unless shown it): every character of it is the grammar's doing.
FORCED = {"type": "object", "properties": {"word": {"type": "string", "enum": ["zqxj-vwk"]},
                                           "count": {"type": "integer"}}, "required": ["word", "count"]}
FREE = {"type": "object", "properties": {"colours": {"type": "array", "items": {"type": "string", "maxLength": 12},
                                                      "maxItems": 3}}, "required": ["colours"]}


@pytest.fixture(scope="module")
def path():
    return gguf_or_skip("smollm2-135m")


def model(path: str, n_ctx: int, monkeypatch, mode: str) -> LlamaCppChatModel:
    """A model on its own ``Llama`` (one per context size), loaded with the sampling ``mode``."""
    monkeypatch.setenv("HUGGINGGPT_GRAMMAR_SAMPLING", mode)
    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "off")
    monkeypatch.setenv("HUGGINGGPT_JUMP_FORWARD", "off")  # sampling alone (batched decoding rounds differently)
    llm = LlamaCppChatModel(model_path=path, n_ctx=n_ctx, max_tokens=80, temperature=0.0)
    llm._client()
    return llm


@pytest.mark.slow
def test_a_forbidden_token_is_drawn_again_within_the_grammar(path, monkeypatch):
    samplers: list[GrammarCheckedSampler] = []
    original = GrammarCheckedSampler.__init__

    def keep(self, *args, **kwargs):
        original(self, *args, **kwargs)
        samplers.append(self)

    monkeypatch.setattr(GrammarCheckedSampler, "__init__", keep)
    llm = model(path, 640, monkeypatch, "checked")
    # the prompt names both fields, so the schema (and its enum value) is not shown to the model
    answer = llm.with_structured_output(FORCED, include_raw=True).invoke("Say hello: answer with a word and a count.")
    assert answer["parsed"]["word"] == "zqxj-vwk" and isinstance(answer["parsed"]["count"], int)
    assert len(samplers) == 1 and 0 < samplers[0].redrawn < samplers[0].drawn


@pytest.mark.slow
@pytest.mark.parametrize("schema", [FORCED, FREE], ids=["forced", "free"])
def test_greedy_answers_are_the_same_as_with_the_grammar_first(path, monkeypatch, schema):
    prompt = "List three colours as JSON." if schema is FREE else "Say hello."
    answers = [model(path, n_ctx, monkeypatch, mode).with_structured_output(schema, include_raw=True).invoke(prompt)
               for n_ctx, mode in ((704, "full"), (768, "checked"))]
    full, checked = (a["raw"].content for a in answers)
    assert checked == full
    assert json.loads(checked) == answers[1]["parsed"]


COLOURS = ["red", "green", "blue", "yellow"]


@pytest.mark.slow
def test_each_drawn_token_keeps_its_runner_up_and_only_real_choices_are_listed(path, monkeypatch):
    import math

    from hugginggpt.llm.grammar_sampling import close_calls
    from hugginggpt.llm.llamacpp import CLOSE_CALL_GAP

    llm = model(path, 640, monkeypatch, "checked")
    schema = {"type": "object", "properties": {"colour": {"type": "string", "enum": COLOURS}}, "required": ["colour"]}
    raw = llm.with_structured_output(schema, include_raw=True).invoke("Name a colour.")["raw"]
    llama = llm._client()[0]
    sampler = llama._checked_sampler
    # one draw a token of the answer (and one for its end, which shows no text)
    assert b"".join(llama.detokenize([token]) for token, _, _ in sampler.draws).decode() == raw.content
    assert len(sampler.draws) - raw.usage_metadata["output_tokens"] in (0, 1)
    calls = close_calls(llama, math.inf)
    answers = [json.dumps({"colour": colour}) for colour in COLOURS]
    # a runner-up is another colour, or the same text split into other tokens ('"' and '":'): what the grammar allows
    for call in calls:
        assert raw.content[call["at"]:].startswith(call["drawn"]) and call["other"] != call["drawn"]
        other = raw.content[:call["at"]] + call["other"]
        assert any(answer.startswith(other) or other.startswith(answer) for answer in answers)
        assert call["gap"] >= 0  # greedy: the drawn token ranks first among the allowed ones
    chosen = json.loads(raw.content)["colour"]
    assert any(not (raw.content[:call["at"]] + call["other"]).startswith(json.dumps({"colour": chosen})[:call["at"] + 1])
               for call in calls)  # the choice of the colour is among them
    listed = raw.response_metadata.get("close_calls", [])
    assert listed == [call for call in calls if call["gap"] <= CLOSE_CALL_GAP]
