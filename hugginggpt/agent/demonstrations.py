"""Few-shot demonstrations chosen per request: the pool's examples most similar to the request (BM25).

HuggingGPT found that a few diverse demonstrations help a planner more than many (gains stop at
about four). A small model copies the shape of the examples it sees, so the examples should look
like the request: a chain for a chain, the same kinds of tasks. The pool (``prompts/demonstrations.json``,
written by hand, not taken from any benchmark) covers every task the Hugging Face domain uses and
the common chains and graphs. Only examples whose tasks are all available are candidates.
Selection is deterministic: BM25 score, then pool order; no two chosen examples plan the same task
sequence; the most similar example comes last, next to the request.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from typing import Any

from hugginggpt.prompts import load_demonstrations

DEFAULT_K = 4
"""How many demonstrations a request gets (HuggingGPT: more diverse examples help up to about four)."""

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
        corpus = [tokens(_demo_text(d)) or ["_"] for d in pool]
        self.index = BM25Okapi(corpus)

    def select(self, request: str, available: Collection[str], k: int = DEFAULT_K) -> list[dict[str, Any]]:
        """Up to ``k`` usable demonstrations for ``request``, least similar first."""
        if k <= 0:
            return []
        usable = [i for i, d in enumerate(self.pool) if all(step["task"] in available for step in d["plan"])]
        if not usable:
            return []
        scores = self.index.get_scores(tokens(request) or ["_"])
        ranked = sorted(usable, key=lambda i: (-scores[i], i))
        chosen: list[int] = []
        shapes: set[tuple[str, ...]] = set()
        for i in ranked:
            shape = tuple(step["task"] for step in self.pool[i]["plan"])
            if shape in shapes:
                continue
            chosen.append(i)
            shapes.add(shape)
            if len(chosen) == k:
                break
        return [self.pool[i] for i in reversed(chosen)]


@cache
def default_selector() -> DemoSelector:
    """The selector over the shipped pool (built once per process)."""
    return DemoSelector(load_demonstrations())


def select_demonstrations(request: str, available: Collection[str], k: int = DEFAULT_K) -> list[dict[str, Any]]:
    """The shipped pool's ``k`` demonstrations most similar to ``request`` that use only ``available`` tasks."""
    return default_selector().select(request, available, k)
