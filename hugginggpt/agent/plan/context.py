"""What every plan pass may read besides the plan: the tasks that can run, the request's files, the
task limit, the text the conversation's last answer gives. Made once per plan; nothing in it reads the
request's wording, only what holds in any language (file names, URLs, task kinds, quotation marks).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from hugginggpt.agent.plan.model import MAX_TASKS
from hugginggpt.tools.resources.mentions import (last_part, listed_files, request_files, same_file, table_files,
                                                 web_urls)
from hugginggpt.tools.resources.sniff import file_kind
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec, text_marks


def request_inputs(request: str, attached: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """What a media or table argument of a plan may read besides earlier results, by kind (image, audio,
    video, table): the files of that kind that ``request`` names (its text, the files listed with it, the
    conversation so far), the URLs it writes (any kind), and ``attached`` files whose kind their name does
    not tell (any kind), in order of appearance; and under ``mark`` the marks a text argument can need
    (``tools/table.text_marks``: fill-mask's mask token) that the request writes, in any letter case."""
    named = request_files(request)
    urls = web_urls(request)
    unknown = [f for f in attached if file_kind(f) not in (*MEDIA_KINDS, "data")]
    tables = table_files(request)
    found = {kind: [*named[kind], *unknown, *urls] for kind in MEDIA_KINDS}
    found["table"] = [*tables, *unknown, *urls]
    found["mark"] = [mark for mark in text_marks() if mark.lower() in (request or "").lower()]
    return {kind: tuple(dict.fromkeys(values)) for kind, values in found.items()}


def given_files(request: str, attached: tuple[str, ...] = ()) -> list[str]:
    """The files a request gives for its tasks to read: the media and table files its text names (a URL
    too, when it names a media file) and the attached files, in order, once each."""
    named = [f for names in request_files(request).values() for f in names]
    tables = table_files(request)
    return list(dict.fromkeys([*named, *tables, *attached]))


def input_kinds(request: str) -> frozenset[str]:
    """The kinds of input (image, audio, video, table) among the files ``request`` names: what its plan's
    first tasks can read. Read from file names only, so it holds in any language."""
    found = {kind for kind, names in request_files(request).items() if names}
    if table_files(request):
        found.add("table")
    return frozenset(found)


_QUOTED = re.compile(
    r'"([^"\n]{2,})"|“([^”]{2,})”|„([^“”]{2,})[“”]|«\s?([^»]{2,}?)\s?»|「([^」]{2,})」|『([^』]{2,})』'
    r"|(?:^|(?<=[\s:：(]))'([^'\n]{2,}?)'(?=$|[\s.,!?;:)])")


_INTRODUCED = re.compile(r"\A[^\n]*[:：]\s*\n(?P<rest>.*\S.*)\Z", re.S)


def answer_text(answer: str) -> str:
    """What an earlier answer gives a later task to read as a text: the one passage it quotes (``Here is the
    transcript: "..."``, ``In Spanish: 'Me encanta esta ciudad'``, 「...」, «...»), else what follows a first line
    that ends in a colon (``Here it is:`` then the poem; ``这是译文：`` then the text), else the whole answer.
    Quotation marks and colons only, so it holds in any language; an apostrophe inside a word opens no quote."""
    found = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(answer)]
    if len(found) == 1:
        return found[0].strip()
    whole = answer.strip()
    introduced = _INTRODUCED.match(whole)
    return introduced.group("rest").strip() if introduced else whole


@dataclass(frozen=True)
class PlanContext:
    """The tasks a plan may use (``known``), the request as the planner read it (``request``: its text
    with the user's files listed after it; None when unknown), the media files it names by kind
    (``files``), the most tasks a plan keeps (``max_tasks``), and the tasks rejected so far."""

    known: Mapping[str, TaskSpec]
    request: str | None = None
    max_tasks: int | None = MAX_TASKS
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    rejected: frozenset[int] = frozenset()
    """Ids of the tasks earlier passes took out (``passes.run_passes`` keeps it)."""
    given: tuple[str, ...] = ()
    """The files the user gives with this request (``given_files``), not those of the conversation before
    it: what the user brings for the plan to work on."""
    lists: tuple[tuple[str, ...], ...] = ()
    """The runs of files the user's own words write as a list (``mentions.listed_files``): like inputs."""
    answer_before: str | None = None
    """What the conversation's last answer gives a task to read as a text (``answer_text``); None when the
    request has no earlier turn."""
    turns: tuple[tuple[str, str], ...] = ()
    """The conversation's earlier asks, each with the answer it got, as written (oldest first)."""
    made_from: bool = False
    """Whether a text of a task that makes only media, written as a whole reference to a picture, sound or video
    an earlier task made from a written text alone, reads that text (``references.kind_true_references``) instead of
    taking its task out: the planner's last resort for a wanted result the model confirms (``planner.py``)."""

    @classmethod
    def of(cls, known: Mapping[str, TaskSpec], request: str | None = None,
           max_tasks: int | None = MAX_TASKS, given: Collection[str] | None = None,
           words: str | None = None, answer_before: str | None = None,
           turns: Collection[tuple[str, str]] = ()) -> "PlanContext":
        """The context of a plan for ``request``; ``given``: the files this request gives when ``request``
        holds more than it (the conversation so far), else ``request``'s own files; ``words``: the user's
        own text for this request when ``request`` holds more (attached files listed after it), else
        ``request``; ``answer_before``: the conversation's last answer, as written; ``turns``: the
        conversation's earlier asks with their answers."""
        files = {kind: tuple(names) for kind, names in request_files(request or "").items()}
        given = tuple(given) if given is not None else tuple(given_files(request or ""))
        lists = tuple(tuple(run) for run in listed_files(words if words is not None else request or ""))
        before = answer_text(answer_before) if answer_before and answer_before.strip() else None
        return cls(known=known, request=request, max_tasks=max_tasks, files=files, given=given, lists=lists,
                   answer_before=before, turns=tuple((str(ask), str(answer)) for ask, answer in turns))

    def gives(self, value: str) -> bool:
        """Whether ``value`` is a file the user gives with this request (as written, or by its last path part)."""
        return any(same_file(value, f) for f in self.given)

    def names_file(self, value: str) -> bool:
        """Whether the request names the file ``value`` (as written, or by its last path part)."""
        if self.request is None:
            return True
        name = value.strip().strip("'\"")
        return bool(name) and (name in self.request or last_part(name) in self.request)

    def file_within(self, value: str) -> str | None:
        """The one file the request names that ``value`` writes among other words (``table example.jpg``),
        found by the request's own file reader (``given_files``); None when it writes none or several."""
        inside = [name for name in given_files(value) if self.names_file(name)]
        return inside[0] if len(inside) == 1 else None

    def one_file(self, kind: str) -> str | None:
        """The request's file of ``kind`` (a media kind, or ``table``) when it names exactly one."""
        files = self.files.get(kind, ()) if kind != "table" else tuple(dict.fromkeys(table_files(self.request or "")))
        return files[0] if len(files) == 1 else None
