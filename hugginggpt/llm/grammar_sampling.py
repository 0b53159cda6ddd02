"""Grammar-constrained sampling that checks the grammar on the drawn token first, as llama.cpp's own
``common_sampler`` does.

llama-cpp-python puts the grammar first in its sampler chain, so every generated token costs a grammar
check of the whole vocabulary (about 150,000 entries for Qwen2.5) before top-k: on two CPU cores that
doubled the time per token of a constrained plan. Here a token is drawn by the same chain without the
grammar, and only that token is checked; when the grammar rejects it, the token is drawn again among
the tokens the grammar allows. Rejection followed by a draw from the allowed tokens gives each allowed
token p / P(allowed): the same distribution as applying the grammar first.

Each drawn token is kept with its runner-up: the allowed token among the model's eight highest that it ranked
next, and the gap between their logits (``draws``; ``close_calls`` lists the narrow ones with where they are in
the answer's text, for the planner to ask about: ``agent/plan/choices.py``).
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals

#: How many of the model's highest-ranked tokens are looked through for a drawn token's runner-up.
RUNNER_UP_TOP = 8
RUNNER_UP_NONE = -1
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


class GrammarCheckedSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` while one grammar-constrained completion runs."""

    def __init__(self, llama: Any, free: _internals.LlamaSampler, grammar: _internals.LlamaSampler, text: str = ""):
        self.llama = llama
        self.text = text  # the grammar's GBNF text
        self.free = free  # the configured chain (penalties, top-k/p, temperature, draw) without the grammar
        self.grammar = grammar  # a chain holding only the grammar: its state follows the accepted tokens
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self.drawn = 0
        self.redrawn = 0
        #: each drawn token, the grammar-allowed token the model ranked next and how many logits below
        #: (``RUNNER_UP_NONE`` and ``inf`` when no other allowed token is among the model's top ones)
        self.draws: list[tuple[int, int, float]] = []

    def sample(self, ctx: Any, idx: int = -1) -> int:
        token = llama_cpp.llama_sampler_sample(self.free.sampler, ctx.ctx, idx)
        self.drawn += 1
        if not self._allowed(token):
            token = self._draw_allowed(ctx, idx)
            self.redrawn += 1
        self.draws.append(self._runner_up(ctx, idx, token))
        llama_cpp.llama_sampler_accept(self.grammar.sampler, token)
        return token

    def _runner_up(self, ctx: Any, idx: int, token: int) -> tuple[int, int, float]:
        """``token``, the allowed token with the next highest logit among the model's top ``RUNNER_UP_TOP``,
        and the gap between their logits (the model's own margin at this choice, before temperature)."""
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self.llama.n_vocab(),))
        top = np.argpartition(logits, -RUNNER_UP_TOP)[-RUNNER_UP_TOP:]
        for other in top[np.argsort(-logits[top])]:
            if int(other) != token and self._allowed(int(other)):
                return token, int(other), float(logits[token] - logits[other])
        return token, RUNNER_UP_NONE, math.inf

    def _allowed(self, token: int, state: Any = None) -> bool:
        """Whether the grammar allows ``token`` next: in its own state, or in ``state`` (a copy of it)."""
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_array.size, self._one_array.selected, self._one_array.sorted = 1, -1, False
        llama_cpp.llama_sampler_apply(self.grammar.sampler if state is None else state, ctypes.byref(self._one_array))
        return not math.isinf(self._one[0].logit)

    def _draw_allowed(self, ctx: Any, idx: int) -> int:
        """Draw among the whole vocabulary with the grammar applied first (the slow path, rarely taken)."""
        n_vocab = self.llama.n_vocab()
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(n_vocab,))
        data = (llama_cpp.llama_token_data * n_vocab)()
        view = np.frombuffer(data, dtype=_TOKEN_DATA)
        view["id"] = np.arange(n_vocab, dtype=np.int32)
        view["logit"] = logits
        view["p"] = 0.0
        candidates = llama_cpp.llama_token_data_array(data=data, size=n_vocab, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self.grammar.sampler, ctypes.byref(candidates))
        llama_cpp.llama_sampler_apply(self.free.sampler, ctypes.byref(candidates))
        return int(data[candidates.selected].id)  # the chain ends with a draw (or greedy pick): it selects


def check_grammar_after_drawing(llama: Any) -> None:
    """Make ``llama`` (a ``llama_cpp.Llama``) sample grammar-constrained completions the checked way."""
    original = llama._init_sampler

    def init_sampler(*args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        free = original(*args, grammar=None, **kwargs)
        if grammar is None:
            return free
        only_grammar = _internals.LlamaSampler()
        only_grammar.add_grammar(llama._model, grammar)
        sampler = GrammarCheckedSampler(llama, free, only_grammar, getattr(grammar, "_grammar", ""))
        llama._checked_sampler = sampler  # the completion's, for ``close_calls`` after it
        return sampler

    llama._init_sampler = init_sampler


def close_calls(llama: Any, max_gap: float) -> list[dict[str, Any]]:
    """The choices of the last grammar-checked completion of ``llama`` that the model made by at most
    ``max_gap`` logits: where in the answer's text each was (``at``, in characters), the text drawn there
    (``drawn``), the allowed text it ranked next (``other``) and the gap. Empty when the last completion was
    not grammar-checked (call ``forget_draws`` before a completion)."""
    sampler = getattr(llama, "_checked_sampler", None)
    if not isinstance(sampler, GrammarCheckedSampler):
        return []
    calls, before = [], b""
    for token, other, gap in sampler.draws:
        piece = llama.detokenize([token])
        if gap <= max_gap and other != RUNNER_UP_NONE:
            calls.append({"at": len(before.decode("utf-8", errors="ignore")),
                          "drawn": piece.decode("utf-8", errors="replace"),
                          "other": llama.detokenize([other]).decode("utf-8", errors="replace"),
                          "gap": round(gap, 3)})
        before += piece
    return calls


def forget_draws(llama: Any) -> None:
    """Forget the last completion's sampler, so that ``close_calls`` reads only the next one's."""
    llama._checked_sampler = None
