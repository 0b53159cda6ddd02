"""Jump-forward decoding: the text a grammar forces is decoded in one batch, then checked token by token.

Much of a structured answer is fixed by its grammar: after a plan step's words, ``", "task": "`` can only
follow; after the first letters of a task name, the rest of it. Decoded one token at a time, each such token
costs a full forward pass (on two CPU cores ~0.1 s for Qwen2.5-Coder-1.5B, memory-bound), while a batch of
several costs little more than one (4 tokens ~1.7 x, 8 tokens ~3 x on an Intel Xeon: docs/PERFORMANCE.md).

``ForcedText`` is a llama-cpp-python draft model (``Llama.draft_model``): after each sampled token it finds the
text the completion's grammar allows next and nothing else (probing the grammar, in a copy of its state, with
one-character tokens, and with the first token of each non-ASCII character of the grammar's text), and
returns its tokens. llama-cpp-python decodes them with the sampled token in one batch and samples at every
position as usual, keeping the drafted tokens only while each equals the token drawn there: the answer is
the one the sampler draws (but for the rounding of batched arithmetic), whatever the draft. A drafted token
the sampler would not pick (another split of the same text, a branch of the grammar the probes missed) is
dropped with the rest of the draft, costing only its share of the batch. Completions without a grammar
(``grammar_sampling.GrammarCheckedSampler``) get no draft.

llama-cpp-python keeps logits only for a batch's last token unless the whole model keeps all of them
(``logits_all``, a copy of every prompt token's logits too); ``use_forced_text`` makes a drafted batch keep
its own, and only its own.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

import llama_cpp
import numpy as np

from hugginggpt.llm.grammar_sampling import _TOKEN_DATA, GrammarCheckedSampler

MAX_DRAFT = 24
"""The most tokens drafted at once (a batch of 24 on two cores costs about what 6 single tokens do)."""
MAX_FORCED_CHARS = 160
"""The longest forced text looked for at once (the longest task name and its keys fit)."""

#: A character beyond ASCII in GBNF text: written as it is, or as an escape (``\u00e4``: llama-cpp-python's converter
#: writes a literal's characters so).
_NON_ASCII = re.compile(r"[^\x00-\x7f]|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}")
_EMPTY = np.zeros(0, dtype=np.intc)


class ForcedText:
    """The draft model of a ``llama_cpp.Llama``: the tokens of the text its grammar forces next."""

    def __init__(self, llama: Any, max_draft: int = MAX_DRAFT):
        self.llama = llama
        self.max_draft = max_draft
        self._chars = _one_char_tokens(llama)  # printable ASCII character -> its token
        self._by_grammar: tuple[GrammarCheckedSampler, Any] | None = None  # the completion's sampler, its probe
        self.pending = False  # a draft waits to be decoded with the next batch
        self.drafted = 0  # tokens drafted so far (a benchmark's count)

    def __call__(self, input_ids: Any, /, **kwargs: Any) -> Any:
        sampler = getattr(self.llama, "_sampler", None)
        if not isinstance(sampler, GrammarCheckedSampler):
            return _EMPTY
        room = self.llama.n_ctx() - self.llama.n_tokens - 2
        limit = min(self.max_draft, room)
        if limit <= 0:
            return _EMPTY
        text = self.forced(sampler)
        if not text:
            return _EMPTY
        tokens = self._allowed_prefix(sampler, self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        tokens = tokens[:limit]
        if not tokens:
            return _EMPTY
        self.pending = True
        self.drafted += len(tokens)
        return np.asarray(tokens, dtype=np.intc)

    def forced(self, sampler: GrammarCheckedSampler) -> str:
        """The text ``sampler``'s grammar allows next and nothing else ("" when two characters or the end may
        follow)."""
        probe = self._probe(sampler)
        first = probe(sampler.grammar.sampler)  # applying a grammar leaves its state as it is
        if first is None:
            return ""
        state = llama_cpp.llama_sampler_clone(sampler.grammar.sampler)
        try:
            text = [self._chars[first]]
            llama_cpp.llama_sampler_accept(state, first)
            while len(text) < MAX_FORCED_CHARS and (token := probe(state)) is not None:
                text.append(self._chars[token])
                llama_cpp.llama_sampler_accept(state, token)
            return "".join(text)
        finally:
            llama_cpp.llama_sampler_free(state)

    def _probe(self, sampler: GrammarCheckedSampler) -> Any:
        """A function of a grammar state: the one character token it allows among the probes, None when it allows
        none or several. The probes: each printable ASCII character, the end of the answer, and the first token of
        each non-ASCII character of the grammar's text (a literal such as a file name may start with one where an
        ASCII character may follow too). Made once per completion."""
        if self._by_grammar is not None and self._by_grammar[0] is sampler:
            return self._by_grammar[1]
        others: dict[int, None] = {}
        for char in sorted({_character(found) for found in _NON_ASCII.findall(sampler.text)} - {""}):
            pieces = self.llama.tokenize(char.encode("utf-8"), add_bos=False, special=False)
            if pieces and pieces[0] not in self._chars:
                others[pieces[0]] = None
        ends = {t for t in (self.llama.token_eos(), self.llama._model.token_eot()) if t >= 0}
        ids = np.asarray([*self._chars, *ends, *others], dtype=np.intc)
        data = (llama_cpp.llama_token_data * len(ids))()
        view = np.frombuffer(data, dtype=_TOKEN_DATA)
        array = llama_cpp.llama_token_data_array(data=data, size=len(ids), selected=-1, sorted=False)
        chars = self._chars

        def probe(state: Any) -> int | None:
            view["id"], view["logit"], view["p"] = ids, 0.0, 0.0
            array.size, array.selected, array.sorted = len(ids), -1, False
            llama_cpp.llama_sampler_apply(state, ctypes.byref(array))
            allowed = view["id"][:array.size][~np.isinf(view["logit"][:array.size])]
            return int(allowed[0]) if len(allowed) == 1 and int(allowed[0]) in chars else None

        self._by_grammar = (sampler, probe)
        return probe

    def _allowed_prefix(self, sampler: GrammarCheckedSampler, tokens: list[int]) -> list[int]:
        """The first of ``tokens`` that the grammar accepts one after another from its present state."""
        state = llama_cpp.llama_sampler_clone(sampler.grammar.sampler)
        try:
            kept = []
            for token in tokens:
                if not sampler._allowed(token, state):
                    break
                llama_cpp.llama_sampler_accept(state, token)
                kept.append(token)
            return kept
        finally:
            llama_cpp.llama_sampler_free(state)


def _character(found: str) -> str:
    """The character beyond ASCII that ``found`` (a ``_NON_ASCII`` match) writes; "" for an escaped ASCII one."""
    char = chr(int(found[2:], 16)) if found.startswith("\\") else found
    return char if ord(char) > 0x7F else ""


def _one_char_tokens(llama: Any) -> dict[int, str]:
    found: dict[int, str] = {}
    for code in range(32, 127):
        char = chr(code)
        tokens = llama.tokenize(char.encode(), add_bos=False, special=False)
        if len(tokens) == 1 and llama.detokenize(tokens) == char.encode():
            found[tokens[0]] = char
    return found


def use_forced_text(llama: Any) -> ForcedText:
    """Make ``llama`` (a ``llama_cpp.Llama`` sampling with ``grammar_sampling.check_grammar_after_drawing``) decode
    the text its grammar forces in batches; returns the draft model."""
    draft = ForcedText(llama)
    evaluate = llama.eval

    def eval_tokens(tokens: Any) -> None:
        drafted, draft.pending = draft.pending, False
        tokens = list(tokens)
        if not drafted or not 1 < len(tokens) <= draft.max_draft + 1:
            return evaluate(tokens)
        # a drafted batch ([sampled token, draft...], at most MAX_DRAFT + 1 tokens) keeps each position's logits
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
        n_past = llama.n_tokens
        llama._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
        llama._ctx.decode(llama._batch)
        llama.input_ids[n_past:n_past + len(tokens)] = tokens
        llama.n_tokens += len(tokens)
        llama._requires_eval = False
        return None

    llama.eval = eval_tokens
    llama.draft_model = draft
    return draft
