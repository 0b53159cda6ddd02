"""What every plan pass may read besides the plan: the tasks that can run, the request's files, the
task limit. Made once per plan; nothing in it reads the request's wording, only what holds in any
language (file names, URLs, task kinds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from hugginggpt.agent.plan.model import MAX_TASKS
from hugginggpt.tools.resources.sniff import MEDIA_SUFFIXES, file_kind
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec

_MEDIA_EXTENSIONS = {kind: sorted(s.lstrip(".") for s in suffixes) for kind, suffixes in MEDIA_SUFFIXES.items()}
# A match starts only where a run of path characters starts (the lookbehind), so a long word is
# scanned once, not once per position: linear time.
_FILE_NAME = re.compile(r"(?<![\w\-./:%~])[\w\-./:%~]+\.(" + "|".join(e for x in _MEDIA_EXTENSIONS.values() for e in x)
                        + r")\b", re.IGNORECASE)
_TABLE_NAME = re.compile(r"(?<![\w\-./:%~])[\w\-./:%~]+\.(csv|tsv|xlsx?|json)\b", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s'\"<>()\[\]{}]+")


def media_kind_of(value: str) -> str | None:
    """image / audio / video by the file extension of ``value``, None when it names no media file."""
    match = _FILE_NAME.fullmatch(value.strip().strip("'\""))
    kind = file_kind(match.group(0)) if match else None
    return kind if kind in MEDIA_KINDS else None


def request_files(request: str) -> dict[str, list[str]]:
    """The media files and URLs a request names, by kind, in order of appearance."""
    found: dict[str, list[str]] = {kind: [] for kind in MEDIA_KINDS}
    for match in _FILE_NAME.finditer(request or ""):
        kind = media_kind_of(match.group(0))
        if kind and match.group(0) not in found[kind]:
            found[kind].append(match.group(0))
    return found


def request_inputs(request: str, attached: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """What a media or table argument of a plan may read besides earlier results, by kind (image, audio,
    video, table): the files of that kind that ``request`` names (its text, the files listed with it, the
    conversation so far), the URLs it writes (any kind), and ``attached`` files whose kind their name does
    not tell (any kind), in order of appearance."""
    named = request_files(request)
    urls = [u.rstrip(".,;:!?") for u in _URL.findall(request or "")]
    unknown = [f for f in attached if file_kind(f) not in (*MEDIA_KINDS, "data")]
    tables = [m.group(0) for m in _TABLE_NAME.finditer(request or "")]
    found = {kind: [*named[kind], *unknown, *urls] for kind in MEDIA_KINDS}
    found["table"] = [*tables, *unknown, *urls]
    return {kind: tuple(dict.fromkeys(values)) for kind, values in found.items()}


def given_files(request: str, attached: tuple[str, ...] = ()) -> list[str]:
    """The files a request gives for its tasks to read: the media and table files its text names (a URL
    too, when it names a media file) and the attached files, in order, once each."""
    named = [f for names in request_files(request).values() for f in names]
    tables = [m.group(0) for m in _TABLE_NAME.finditer(request or "")]
    return list(dict.fromkeys([*named, *tables, *attached]))


def input_kinds(request: str) -> frozenset[str]:
    """The kinds of input (image, audio, video, table) among the files ``request`` names: what its plan's
    first tasks can read. Read from file names only, so it holds in any language."""
    found = {kind for kind, names in request_files(request).items() if names}
    if _TABLE_NAME.search(request or ""):
        found.add("table")
    return frozenset(found)


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

    @classmethod
    def of(cls, known: Mapping[str, TaskSpec], request: str | None = None,
           max_tasks: int | None = MAX_TASKS) -> "PlanContext":
        files = {kind: tuple(names) for kind, names in request_files(request or "").items()}
        return cls(known=known, request=request, max_tasks=max_tasks, files=files)

    def names_file(self, value: str) -> bool:
        """Whether the request names the file ``value`` (as written, or by its last path part)."""
        if self.request is None:
            return True
        name = value.strip().strip("'\"")
        return bool(name) and (name in self.request or name.replace("\\", "/").rsplit("/", 1)[-1] in self.request)

    def one_file(self, kind: str) -> str | None:
        """The request's file of ``kind`` when it names exactly one."""
        files = self.files.get(kind, ())
        return files[0] if len(files) == 1 else None
