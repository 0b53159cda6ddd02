"""Jump-forward decoding (``llm/jump_forward.py``) on the real SmolLM2-135M GGUF: the text a grammar forces is
found in llama.cpp's own grammar engine (and nothing more: not past a place where two characters may follow,
whatever script they are in), decoded in batches, and the answer stays inside the grammar."""

from __future__ import annotations

import pytest

from hugginggpt.llm.grammar_sampling import GrammarCheckedSampler
from hugginggpt.llm.json_grammar import schema_grammar
from hugginggpt.llm.jump_forward import ForcedText
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from tests.shared import gguf_or_skip

#: A value no model writes on its own: every character of it is the grammar's doing.
FORCED = {"type": "object", "properties": {"word": {"type": "string", "enum": ["zqxj-vwk"]},
                                           "count": {"type": "integer"}}, "required": ["word", "count"]}


@pytest.fixture(scope="module")
def path():
    return gguf_or_skip("smollm2-135m")


@pytest.fixture(scope="module")
def vocab(path):
    """A real tokenizer (SmolLM2-135M's vocabulary only: no weights are loaded)."""
    from llama_cpp import Llama

    return Llama(model_path=path, vocab_only=True, verbose=False)


def sampler(vocab, schema) -> GrammarCheckedSampler:
    """A grammar-checked sampler of ``schema``'s grammar at its start (no free chain: only the grammar is read)."""
    from llama_cpp import LlamaGrammar, _internals

    text = schema_grammar(schema)
    grammar = _internals.LlamaSampler()
    grammar.add_grammar(vocab._model, LlamaGrammar.from_string(text, verbose=False))
    return GrammarCheckedSampler(vocab, None, grammar, text)


def written(vocab, state: GrammarCheckedSampler, text: str) -> None:
    """``text`` accepted by ``state``'s grammar, token by token."""
    import llama_cpp

    for token in vocab.tokenize(text.encode(), add_bos=False, special=False):
        llama_cpp.llama_sampler_accept(state.grammar.sampler, token)


def test_the_forced_text_runs_to_where_a_choice_is_left(vocab):
    draft = ForcedText(vocab)
    state = sampler(vocab, FORCED)
    assert draft.forced(state) == '{"word": "zqxj-vwk", "count": '
    written(vocab, state, '{"word": "zqxj-vwk", "count": ')
    assert draft.forced(state) == ""  # any digit, or a minus sign
    written(vocab, state, "12")
    assert draft.forced(state) == ""  # another digit, or the closing brace
    written(vocab, state, "}")
    assert draft.forced(state) == ""  # only the end of the answer


def test_a_choice_between_an_ascii_and_another_character_is_left_to_the_model(vocab):
    """A file name starting with a non-ASCII letter beside one starting with an ASCII letter: only the quote is forced,
    though among one-character ASCII tokens the grammar allows just one."""
    files = {"type": "object", "properties": {"image": {"type": "string", "enum": ["a.jpg", "ä.jpg"]}},
             "required": ["image"]}
    draft = ForcedText(vocab)
    state = sampler(vocab, files)
    assert draft.forced(state) == '{"image": "'
    written(vocab, state, '{"image": "')
    assert draft.forced(state) == ""
    written(vocab, state, "a")
    assert draft.forced(state) == '.jpg"}'


def model(path: str, n_ctx: int, monkeypatch, jump: str) -> LlamaCppChatModel:
    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "off")
    monkeypatch.setenv("HUGGINGGPT_JUMP_FORWARD", jump)
    llm = LlamaCppChatModel(model_path=path, n_ctx=n_ctx, max_tokens=80, temperature=0.0)
    llm._client()
    return llm


@pytest.mark.slow
def test_a_structured_answer_decodes_its_forced_text_in_batches(path, monkeypatch):
    llm = model(path, 832, monkeypatch, "on")
    llama, _ = llm._client()
    batches: list[int] = []
    evaluate = llama.eval

    def counted(tokens):
        batches.append(len(tokens))
        return evaluate(tokens)

    monkeypatch.setattr(llama, "eval", counted)
    answer = llm.with_structured_output(FORCED, include_raw=True).invoke("Say hello: answer with a word and a count.")
    assert answer["parsed"]["word"] == "zqxj-vwk" and isinstance(answer["parsed"]["count"], int)
    generated = answer["raw"].usage_metadata["output_tokens"]
    assert llama.draft_model.drafted >= 5  # the keys and the enum's value
    assert len(batches) - 1 < generated  # fewer decodes than tokens (the first one reads the prompt)
    assert max(batches[1:]) > 2


@pytest.mark.slow
def test_without_jump_forward_each_token_is_decoded_alone(path, monkeypatch):
    llm = model(path, 896, monkeypatch, "off")
    llama, _ = llm._client()
    assert llama.draft_model is None
    answer = llm.with_structured_output(FORCED, include_raw=True).invoke("Say hello: answer with a word and a count.")
    assert answer["parsed"]["word"] == "zqxj-vwk"
