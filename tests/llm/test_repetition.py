"""The embedded model stops an answer that repeats itself (issue 23: a 135M controller looped in
planning for 400 s), and takes a per-call token bound.

The detector is tested on token sequences: loops of any unit length stop, answers that merely
repeat their structure (JSON keys, similar steps) do not. The real model is then forced into a loop
(a logit bias on one token) and must end with ``finish_reason="repetition"`` long before its limit.
"""

from __future__ import annotations

import json
import re

import pytest

from hugginggpt.llm.repetition import MIN_SPAN, RepetitionStop


def _tokens(text: str, vocab: dict[str, int]) -> list[int]:
    """A stand-in tokenizer: words, numbers, punctuation and each space or newline, each its own id."""
    return [vocab.setdefault(piece, len(vocab)) for piece in re.findall(r"\w+|[^\w\s]|\s", text)]


def _stopped_at(tokens: list[int]) -> int | None:
    stop = RepetitionStop()
    for i, token in enumerate(tokens):
        if stop.push(token):
            return i
    return None


@pytest.mark.parametrize("unit", ["\n", " the", "The image shows a cat. ",
                                  '{"task": "image-to-text", "args": {"image": "a.png"}}, ' * 2])
def test_a_loop_of_any_unit_length_is_stopped(unit):
    vocab: dict[str, int] = {}
    start, loop = _tokens('[{"step": "look", ', vocab), _tokens(unit, vocab)
    at = _stopped_at(start + loop * 400)
    assert at is not None and at < len(start) + max(MIN_SPAN, 4 * len(loop)) + len(loop)


def test_answers_that_repeat_their_structure_are_not_stopped():
    vocab: dict[str, int] = {}
    plan = [{"step": "caption the picture", "task": "image-to-text", "id": i, "dep": [-1],
             "args": {"image": "cat.png"}} for i in range(10)]
    selection = {str(i): {"id": "Salesforce/blip-image-captioning-large", "reason": "the most downloaded captioner"}
                 for i in range(12)}
    prose = " ".join(f"Step {i}: the model read the image and wrote a caption." for i in range(30))
    for answer in (json.dumps(plan), json.dumps(selection, indent=2), prose):
        assert _stopped_at(_tokens(answer, vocab)) is None, answer[:80]


def test_the_prompt_is_never_compared():
    stop = RepetitionStop()
    prompt = [7] * 1000  # a prompt of one token repeated: not the answer
    assert stop(prompt) is False
    assert stop(prompt + [1, 2, 3]) is False and stop.tokens == [1, 2, 3]


@pytest.fixture(scope="module")
def smollm():
    from hugginggpt.llm import load_llm
    from tests.shared import gguf_or_skip

    return load_llm("gguf:" + gguf_or_skip("smollm2-135m"), n_ctx=1024, max_tokens=600)


@pytest.mark.slow
def test_the_embedded_model_stops_a_loop_and_says_so(smollm):
    llama, _ = smollm._client()
    cat = llama.tokenize(b" cat", add_bos=False, special=False)[-1]
    forced = smollm.bind(logit_bias={str(cat): 100.0})  # every token " cat": a loop from the first one
    answer = forced.invoke("Tell me about animals.")
    assert answer.response_metadata["finish_reason"] == "repetition"
    assert answer.usage_metadata["output_tokens"] <= MIN_SPAN + 8  # not the 600 of max_tokens
    chunks = list(forced.stream("Tell me about animals."))
    assert chunks[-1].response_metadata["finish_reason"] == "repetition"


@pytest.mark.slow
def test_a_call_bound_holds_through_bind_and_structured_output(smollm):
    from hugginggpt.llm.token_limits import bounded

    short = bounded(smollm, 8).invoke("Write a long story about a cat.")
    assert short.response_metadata["finish_reason"] == "length" and short.usage_metadata["output_tokens"] <= 8
    schema = {"type": "object", "properties": {"story": {"type": "string"}}, "required": ["story"]}
    raw = bounded(smollm, 8).with_structured_output(schema, include_raw=True).invoke("Write a long story.")["raw"]
    assert raw.response_metadata["finish_reason"] == "length" and raw.usage_metadata["output_tokens"] <= 8
