"""How plan repairs read a request: folded for comparison, the passages it quotes, and its own words
around them.

A request's cue words ("write", "image", "aloud") say what the user asks for only outside its quotes:
in "Summarize 'Once upon a time, a story ...'" the word "story" belongs to the text to summarize.
"""

from __future__ import annotations

import re

#: A quoted span: between quotes that are not apostrophes inside a word ("it's").
_QUOTED = re.compile(r"(?<!\w)(['\"])(.+?)\1(?!\w)", re.DOTALL)
#: Words a quoted text needs to count as a passage (a question or a name is shorter).
PASSAGE_WORDS = 8


def folded(text: str) -> str:
    """``text`` lower-cased with its white space folded: how repairs compare a value with the request."""
    return " ".join((text or "").lower().split())


def quoted_texts(request: str) -> list[str]:
    """The quoted texts of ``request``, in order."""
    return [m.group(2).strip() for m in _QUOTED.finditer(request or "")]


def quoted_passages(request: str) -> list[str]:
    """The quoted texts long enough to be a passage (not a question or a name), longest first."""
    return sorted((t for t in quoted_texts(request) if len(t.split()) >= PASSAGE_WORDS), key=len, reverse=True)


def own_words(request: str) -> str:
    """``request`` without its quoted texts: what the user says, not what they quote."""
    return _QUOTED.sub(" ", request or "")
