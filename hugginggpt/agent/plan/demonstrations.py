"""Few-shot demonstrations: a block chosen by the kinds of input the request gives, then (when asked
for) the pool's examples most similar to the request (BM25).

HuggingGPT found that a few diverse demonstrations help a planner more than many (gains stop at
about four), and a small model copies the shape of the examples it sees, so the last example should
look like the request: a chain for a chain, the same kinds of tasks. The pool
(``prompts/demonstrations.json``, written by hand, not taken from any benchmark) covers every task the
Hugging Face domain uses and the common chains and graphs.

The examples marked ``"block": true`` are grouped by the kinds of input they read (image, audio,
video, table; none: generation and chit-chat). A request sees the block for its own kinds (``block``):
a few examples without files, examples with some of its kinds, all examples with exactly its kinds,
in pool order. A block is the same for every request with those kinds: it belongs to the prompt's
static prefix, whose evaluated state llama.cpp keeps (``llm/prompt_cache.py``, one state per block),
so it costs no prompt reading after the first such request. Only ``k`` examples per request are new
tokens to read.

Only examples whose tasks are all available are candidates. Selection is deterministic: BM25 score,
then pool order; no chosen example plans the same task sequence as another; the most similar one
comes last, next to the request.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from typing import Any

from hugginggpt.agent.plan.context import input_kinds
from hugginggpt.prompts import load_demonstrations

DEFAULT_K = 0
"""How many demonstrations are chosen per request, after the block: none by default, so the
request is the only new prompt text to read (why: docs/results/dev-ab/README.md). Callers that want
examples like the request pass ``demonstrations=K`` to the agent."""

GENERAL_IN_BLOCK = 3
"""Demonstrations without files at the start of a block for requests that give files."""
RELATED_IN_BLOCK = 4
"""Demonstrations with some of the request's kinds of input, for requests that give several kinds."""

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "from", "by", "at", "as", "is", "are", "be", "this", "that", "these", "those", "it", "its", "i", "me", "my", "you", "your", "we", "our", "please", "can", "could", "would", "like", "want", "need", "have", "has", "do", "does", "some", "any", "then", "also", "and", "so", "about", "into"]
)


def tokens(text: str) -> list[str]:
    """Lower-case words without stop words; file extensions stay (``jpg`` says: an image)."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def _demo_text(demo: dict[str, Any]) -> str:
    tasks = " ".join(step["task"].replace("-", " ") for step in demo["plan"])
    return f"{demo['input']} {tasks}"


class DemoSelector:
    """BM25 over the pool's requests (and their task names); ``select`` picks per request."""

    def __init__(self, pool: list[dict[str, Any]]):
        from rank_bm25 import BM25Okapi

        self.pool = pool
        self.kinds = [input_kinds(d["input"]) for d in pool]
        corpus = [tokens(_demo_text(d)) or ["_"] for d in pool]
        self.index = BM25Okapi(corpus)

    def block(self, kinds: frozenset[str], usable: list[int]) -> list[int]:
        """The block of demonstrations for requests giving inputs of ``kinds`` (image, audio, video, table;
        none for a request without files): a few without files (generation, chit-chat), then those whose
        inputs are some of ``kinds``, then those whose inputs are exactly ``kinds``, pool order within each.
        The same for every request with these kinds, so a model that keeps what it read reads it once."""
        blocks = [i for i in usable if self.pool[i].get("block")]
        own = self.kinds
        general = [i for i in blocks if not own[i]]
        if not kinds:
            return general
        related = [i for i in blocks if own[i] and own[i] < kinds]
        matched = [i for i in blocks if own[i] == kinds]
        if not matched and not related:  # kinds no block demonstration has together: each kind's own
            related = [i for i in blocks if own[i] and own[i] & kinds]
        related = _interleaved(related, own)
        return [*general[:GENERAL_IN_BLOCK], *related[:RELATED_IN_BLOCK], *matched]

    def select(self, request: str, available: Collection[str], k: int = DEFAULT_K,
               inputs: str | None = None) -> list[dict[str, Any]]:
        """The block of usable demonstrations for the kinds of input the request gives (``block``: read from
        ``inputs``, the text that names what the plan may read, else from ``request``), then up to ``k`` more
        for ``request``, the most similar last."""
        usable = [i for i, d in enumerate(self.pool) if all(step["task"] in available for step in d["plan"])]
        fixed = self.block(input_kinds(request if inputs is None else inputs), usable)
        shapes = {_shape(self.pool[i]) for i in fixed}
        chosen: list[int] = []
        if k > 0 and usable:
            scores = self.index.get_scores(tokens(request) or ["_"])
            for i in sorted((i for i in usable if i not in fixed), key=lambda i: (-scores[i], i)):
                if _shape(self.pool[i]) in shapes:
                    continue
                chosen.append(i)
                shapes.add(_shape(self.pool[i]))
                if len(chosen) == k:
                    break
        return [self.pool[i] for i in [*fixed, *reversed(chosen)]]


def _interleaved(indices: list[int], kinds: list[frozenset[str]]) -> list[int]:
    """``indices`` taken in turn from each kind-set's own list (pool order within one), so a block for
    several kinds of input shows each of them."""
    lists: dict[frozenset[str], list[int]] = {}
    for i in indices:
        lists.setdefault(kinds[i], []).append(i)
    out: list[int] = []
    while any(lists.values()):
        for queue in lists.values():
            if queue:
                out.append(queue.pop(0))
    return out


def _shape(demo: dict[str, Any]) -> tuple[str, ...]:
    return tuple(step["task"] for step in demo["plan"])


@cache
def default_selector() -> DemoSelector:
    """The selector over the shipped pool (built once per process)."""
    return DemoSelector(load_demonstrations())


def select_demonstrations(request: str, available: Collection[str], k: int = DEFAULT_K,
                          inputs: str | None = None) -> list[dict[str, Any]]:
    """The shipped pool's block for the kinds of input ``inputs`` names (else ``request``) and the ``k``
    most similar to ``request``, using only ``available`` tasks."""
    return default_selector().select(request, available, k, inputs)
