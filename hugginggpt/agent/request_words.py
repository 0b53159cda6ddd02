"""How plan repairs read a request: folded for comparison, the passages it quotes, its own words
around them, and the media files it names. ``RequestWords`` is that reading, made once per plan and
shared by every repair.

A request's cue words ("write", "image", "aloud") say what the user asks for only outside its quotes:
in "Summarize 'Once upon a time, a story ...'" the word "story" belongs to the text to summarize.
"""

from __future__ import annotations

import re

from hugginggpt.tools.resources.sniff import MEDIA_SUFFIXES

#: A quoted span: between quotes that are not apostrophes inside a word ("it's").
_QUOTED = re.compile(r"(?<!\w)(['\"])(.+?)\1(?!\w)", re.DOTALL)
#: Words a quoted text needs to count as a passage (a question or a name is shorter).
PASSAGE_WORDS = 8


_MEDIA_EXTENSIONS = {kind: sorted(s.lstrip(".") for s in suffixes) for kind, suffixes in MEDIA_SUFFIXES.items()}
# A match starts only where a run of path characters starts (the lookbehind), so a long word is
# scanned once, not once per position: linear time.
_FILE_NAME = re.compile(r"(?<![\w\-./:%~])[\w\-./:%~]+\.(" + "|".join(e for x in _MEDIA_EXTENSIONS.values() for e in x)
                        + r")\b", re.IGNORECASE)


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


def media_kind_of(value: str) -> str | None:
    """image / audio / video by the file extension of ``value``, None when it names no media file."""
    match = _FILE_NAME.fullmatch(value.strip().strip("'\""))
    if not match:
        return None
    extension = match.group(1).lower()
    return next(kind for kind, extensions in _MEDIA_EXTENSIONS.items() if extension in extensions)


def request_files(request: str) -> dict[str, list[str]]:
    """The media files and URLs a request names, by kind, in order of appearance."""
    found: dict[str, list[str]] = {kind: [] for kind in _MEDIA_EXTENSIONS}
    for match in _FILE_NAME.finditer(request or ""):
        kind = media_kind_of(match.group(0))
        if kind and match.group(0) not in found[kind]:
            found[kind].append(match.group(0))
    return found


class RequestWords:
    """One request as the repairs read it, made once per plan: ``text`` as the user wrote it,
    ``folded`` (lower case, white space folded), ``own`` (its own words, without the texts it quotes),
    ``passages`` (its quoted passages, longest first) and ``files`` (the media files it names, by kind)."""

    def __init__(self, text: str):
        self.text = text or ""
        self.folded = folded(self.text)
        self.own = own_words(self.text)
        self.passages = quoted_passages(self.text)
        self.files = request_files(self.text)

    def names_file(self, value: str) -> bool:
        """Whether the request names the file ``value`` (as written, or by its last path part)."""
        name = value.strip().strip("'\"")
        return name in self.text or name.replace("\\", "/").rsplit("/", 1)[-1] in self.text

    def says(self, value: str) -> bool:
        """Whether ``value`` is a phrase of the request (folded, quotes and a final stop aside)."""
        phrase = folded(value).strip(" '\".")
        return bool(phrase) and phrase in self.folded
