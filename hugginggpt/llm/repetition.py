"""Stopping a generation that repeats itself: the same stretch of tokens, over and over, verbatim.

Small models fall into loops ("The image shows a cat. The image shows a cat. ...", a run of
newlines inside grammar-constrained JSON) and then write until ``max_tokens``, holding the one
embedded model meanwhile. ``RepetitionStop`` watches the generated tokens (not the prompt) and stops
when the tail of the answer is one unit of ``p`` tokens repeated: at least ``min_repeats`` times and
over at least ``min_span`` tokens, for units up to ``max_period`` tokens. Legitimate answers do not
repeat that way: JSON repeats its keys, but each task, id or value between them differs, and any
differing token ends a repetition. An answer it stops ends with ``finish_reason="repetition"``.

The check is incremental: per token, one comparison per unit length (``max_period``), so it costs
microseconds next to the model's milliseconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

#: Defaults: a unit repeated 4 times and covering 128 tokens (one token 128 times, a 32-token
#: sentence 4 times), units up to 256 tokens.
MIN_REPEATS = 4
MIN_SPAN = 128
MAX_PERIOD = 256


class RepetitionStop:
    """A llama-cpp-python stopping criterion (``(input_ids, logits) -> bool``) for one completion.

    The first call sees the prompt: what it holds is not the answer, and is never compared.
    ``triggered`` says whether it stopped the completion.
    """

    def __init__(self, min_repeats: int = MIN_REPEATS, min_span: int = MIN_SPAN, max_period: int = MAX_PERIOD):
        if min_repeats < 2 or max_period < 1:
            raise ValueError("a repetition needs at least 2 repeats of a unit of at least 1 token")
        self.min_repeats, self.min_span, self.max_period = min_repeats, min_span, max_period
        self.tokens: list[int] = []
        # runs[p]: how many of the last tokens each equal the token p before them (the tail is
        # p-periodic over runs[p] + p tokens)
        self._runs = [0] * (max_period + 1)
        self._prompt: int | None = None
        self.triggered = False
        self.unit: int | None = None  # the length of the repeated unit, once triggered

    def __call__(self, input_ids: Any, logits: Any = None) -> bool:
        if self.triggered:
            return True
        if self._prompt is None:
            self._prompt = len(input_ids)
            return False
        for token in input_ids[self._prompt + len(self.tokens):]:
            if self.push(int(token)):
                return True
        return False

    def push(self, token: int) -> bool:
        """Add one generated token; True once the answer's tail repeats itself."""
        tokens, runs = self.tokens, self._runs
        tokens.append(token)
        last = len(tokens) - 1
        for period in range(1, min(self.max_period, last) + 1):
            if tokens[last - period] == token:
                runs[period] += 1
                span = runs[period] + period
                if span >= self.min_span and span >= self.min_repeats * period:
                    self.triggered, self.unit = True, period
                    return True
            else:
                runs[period] = 0
        return False


@contextlib.contextmanager
def stopping_repetition(llama: Any, stop: RepetitionStop) -> Iterator[RepetitionStop]:
    """While it is open, every completion ``llama`` (a ``llama_cpp.Llama``) starts also stops at ``stop``.

    llama-cpp-python's chat handlers take no stopping criteria from the caller, but each starts its
    completion through ``llama.create_completion``: that call gets ``stop`` added for as long as this
    is open. The caller holds the model's lock (no other call can start meanwhile); a streamed
    completion keeps its criteria after this closes.
    """
    from llama_cpp import StoppingCriteriaList

    original = llama.create_completion

    def create_completion(*args: Any, stopping_criteria: Any = None, **kwargs: Any) -> Any:
        criteria = StoppingCriteriaList([*(stopping_criteria or []), stop])
        return original(*args, stopping_criteria=criteria, **kwargs)

    llama.create_completion = create_completion
    try:
        yield stop
    finally:
        del llama.create_completion  # the class's method again
