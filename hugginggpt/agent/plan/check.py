"""Whether a plan can run as written: THE definition of a runnable plan, which the validity passes fix
toward and the planner checks its final plan against.

``problems(plan, context)`` lists what stops a plan from running: an unknown task or argument, a
``choice`` value that is not one of its choices, a missing required argument, a media argument that
is neither a file the request names, a URL nor a whole reference to a task making that kind, a text
without the mark its argument needs (fill-mask's mask token: ``unmarked``), a
reference to the task itself, to no task or to a task making no output of the argument's kind, a
whole-value placeholder written instead of a reference, a table file the request does not give, an
analysis or map of the picture the same task drew (``own_marks``), an edit or restyling of a condition map
(``map_misread``), a drawing along a map written on a picture that is no map (``photo_drawing``: a photo
the user gives, a generated picture, another drawing), a media file given as a text where a task reads
that file (``media_as_text``), a cycle. The predicates the passes decide by (``readable_media``,
``unreadable_table``, ``is_placeholder``, ``map_misread``, ``photo_drawing``, ``media_as_text``,
``own_marks``) live here too. A plan with no problems passes every validity pass unchanged (the property
tests and the gold-fidelity test hold the passes to it).
"""

from __future__ import annotations

import graphlib
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import CANONICAL_REF, Plan, PlanTask, whole_ref, work_key
from hugginggpt.tools.resources.mentions import (last_part, looks_like_path, media_kind_of, request_files,
                                                 same_file, table_files)
from hugginggpt.tools.table import MEDIA_KINDS, ArgSpec, TaskSpec, map_makers

#: Longer values are never a placeholder (bounded work).
_MAX_PLACEHOLDER = 200
#: A whole value that is a placeholder in a syntax of its own, written where a reference belongs:
#: ``{caption}``, ``$1``, ``${text}``, ``#0``, ``<output of task 0>``.
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|\$\{?\w+\}?|#\d+|<[^<>]*>")


def problems(plan: Plan, ctx: PlanContext) -> list[str]:
    """What stops ``plan`` from running as written, one line each; [] when it can run."""
    found: list[str] = []
    by_id = plan.by_id
    if len(by_id) != len(plan.tasks):
        found.append("task ids repeat")
    for task in plan.tasks:
        info = ctx.known.get(task.task)
        if info is None:
            found.append(f"task {task.id}: unknown task {task.task!r}")
            continue
        if info.args:
            for name in task.args:
                if info.find_arg(name) is None:
                    found.append(f"task {task.id}: {task.task} takes no argument {name!r}")
            for arg in info.args:
                value = task.args.get(arg.name)
                if arg.required and value in (None, "", []):
                    found.append(f"task {task.id}: required argument {arg.name!r} missing")
                choices = arg.choices
                if choices and isinstance(value, str) and value not in choices and not CANONICAL_REF.search(value):
                    found.append(f"task {task.id}: {arg.name}={value!r} is not one of {list(choices)}")
                if unmarked(arg, value, by_id, ctx.known, ctx.request):
                    found.append(f"task {task.id}: {arg.name} {value[:60]!r} holds none of {arg.marks}")
        for name, value in task.args.items():
            arg = info.find_arg(name)
            kind = arg.value_kind if arg is not None else "text"
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    found.extend(f"task {task.id}: argument {name!r}: {p}" for p in _value_problems(task.id, kind, item,
                                                                                                   by_id, ctx))
        drawing = map_misread(task, by_id, ctx)
        if drawing is not None:
            found.append(f"task {task.id}: {task.task} reads a condition map, which {drawing} draws along")
        on_photo = photo_drawing(task, by_id, ctx)
        if on_photo is not None:
            _, photo, maker = on_photo
            found.append(f"task {task.id}: {task.task} draws along a map, not on the picture {photo!r} ({maker} "
                         "makes its map)")
        marked = own_marks(task, by_id, ctx)
        if marked is not None:
            found.append(f"task {task.id}: {task.task} {own_marks_read_as(marked[1], ctx)}")
        as_text = media_as_text(task, ctx)
        if as_text is not None:
            found.append(f"task {task.id}: {task.task} reads the file {as_text.file!r} as its {as_text.arg} ("
                         + (f"{as_text.sibling} does its job on it)" if as_text.sibling
                            else f"{as_text.reader} gives its text)"))
    graph = {t.id: t.references() & by_id.keys() for t in plan.tasks}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        found.append(f"tasks {sorted(set(err.args[1]))} depend on each other in a cycle")
    return found


def unmarked(arg: ArgSpec, value: Any, by_id: Mapping[int, PlanTask], known: Mapping[str, TaskSpec],
             request: str | None = None) -> bool:
    """Whether ``value``, written for ``arg``, can hold none of the marks the argument needs (fill-mask's mask
    token): its own words hold none, and it is not the whole output of a task that writes a text (text and no
    labels or scores: a written text can hold a mark, a label or an answer to a question cannot) for a
    ``request`` that writes a mark itself (a text made for a request with no mask token in it has none)."""
    if not arg.lacks_mark(value):
        return False
    if request is not None and arg.lacks_mark(request):
        return True
    source = by_id.get(whole_ref(value)) if isinstance(value, str) else None
    spec = known.get(source.task) if source is not None else None
    return spec is None or set(spec.outputs) != {"text"}


def _value_problems(own: int, kind: str, value: str, by_id: dict, ctx: PlanContext) -> list[str]:
    refs = [int(n) for n in CANONICAL_REF.findall(value)]
    found = []
    for n in refs:
        if n == own:
            found.append("reads its own task's output")
        elif n not in by_id:
            found.append(f"reads task {n}, which the plan does not have")
        elif kind in ("text", *MEDIA_KINDS) and ctx.known[by_id[n].task].outputs and not ctx.known[by_id[n].task].produces(kind):
            found.append(f"reads task {n} ({by_id[n].task}), which makes no {kind}")
    if refs or ctx.request is None:
        if kind in MEDIA_KINDS and refs and whole_ref(value) is None:
            found.append(f"a {kind} is a whole <resource>-N, a file or a URL, not {value[:60]!r}")
        return found
    if kind in MEDIA_KINDS and not readable_media(value, ctx):
        found.append(f"{value[:60]!r} is no file the request names")
    elif kind == "table" and (shown := table_shown_as(value)) is not None:
        found.append(f"{value[:60]!r} is {article(shown)} {shown}, not a table file")
    elif kind == "table" and unreadable_table(value, ctx):
        found.append(f"{value[:60]!r} is no file the request names")
    elif kind not in MEDIA_KINDS and is_placeholder(value, ctx):
        found.append(f"{value[:60]!r} is a placeholder, not a reference")
    return found


def unread_files(plan: Plan, files: list[str]) -> list[str]:
    """The ``files`` (those a request gives) that no argument of ``plan`` reads, as written or by their last
    path part."""
    values: set[str] = set()
    for task in plan.tasks:
        for value in task.args.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    values.add(item.strip().strip("'\""))
    names = {last_part(v) for v in values}
    return [f for f in files if f not in values and last_part(f) not in names]


def repeated_steps(plan: Plan) -> list[tuple[PlanTask, PlanTask]]:
    """Each step that does exactly what an earlier step does (the same task on the same arguments, ``work_key``),
    with that earlier step."""
    first: dict[tuple[str, str], PlanTask] = {}
    pairs = []
    for step in plan.tasks:
        earlier = first.setdefault(work_key(step.task, step.args), step)
        if earlier is not step:
            pairs.append((earlier, step))
    return pairs


def text_guided_image(spec: TaskSpec | None) -> bool:
    """Whether ``spec`` is a text-guided image task that is no drawing along a map: it takes a picture and a
    text and makes only a picture (image-text-to-image, image-to-image: an edit, a restyling)."""
    return (spec is not None and spec.outputs == ["image"] and not spec.draws_on_map
            and any(a.kind == "text" for a in spec.args) and any(a.kind == "image" for a in spec.args))


def map_misread(task: PlanTask, by_id: dict[int, PlanTask], ctx: PlanContext) -> str | None:
    """The drawing task ``task`` should be, when it is a text-guided image task (``text_guided_image``; a
    drawing along another map stays) whose image is a condition map (``drawings_on_maps``); None otherwise."""
    spec = ctx.known.get(task.task)
    if spec is None or not text_guided_image(spec):
        return None
    for arg in spec.args:
        source = by_id.get(whole_ref(task.args.get(arg.name))) if arg.kind == "image" else None
        if source is not None and source.task in ctx.known and ctx.known[source.task].drawn_by:
            return ctx.known[source.task].drawn_by
    return None


class HalfPair(NamedTuple):
    """A condition map of a photo the user gives that no task reads (``map_task``), beside the plan's one edit
    of another photo the user gives (``edit``, reading ``photo``): the two halves ``half_pair`` finds.
    ``drawing``: the map's drawing task (``drawn_by``)."""

    map_task: PlanTask
    edit: PlanTask
    photo: str
    drawing: str


def half_pair(plan: Plan, ctx: PlanContext) -> HalfPair | None:
    """The condition map and the edit of a plan that begins a pair and ends it with an edit of another photo:
    exactly one task making a condition map (``drawn_by``: openpose-control) of a photo the user gives, which no
    task reads, followed by exactly one text-guided image task (``text_guided_image``), editing another photo the
    user gives, with no drawing along any map in the plan. An unread map is a result when it is all the plan
    makes; beside an edit of another photo, it is the map a drawing was to follow, and that photo what to draw
    ("the pose of dancer.jpg, the content of park.jpg": the model wrote openpose-control of dancer.jpg, then
    image-text-to-image of park.jpg). An edit of the map's own photo is left: "the edges of a.jpg, and a.jpg in
    the snow" asks for both. None otherwise (``preference.edits_beside_unread_maps``)."""
    if ctx.request is None or any(ctx.known[t.task].draws_on_map for t in plan.tasks if t.task in ctx.known):
        return None
    read = set().union(*(t.references() for t in plan.tasks))

    def photo(task: PlanTask) -> str | None:
        spec = ctx.known.get(task.task)
        value = next((task.args.get(a.name) for a in spec.args if a.kind == "image"), None) if spec else None
        return value if isinstance(value, str) and whole_ref(value) is None and ctx.gives(value) else None

    maps = [t for t in plan.tasks if t.task in ctx.known and ctx.known[t.task].drawn_by and t.id not in read
            and photo(t) is not None]
    edits = [t for t in plan.tasks if text_guided_image(ctx.known.get(t.task)) and photo(t) is not None]
    if len(maps) != 1 or len(edits) != 1 or plan.tasks.index(maps[0]) > plan.tasks.index(edits[0]):
        return None
    edited = str(photo(edits[0]))
    if same_file(str(photo(maps[0])), edited):
        return None
    return HalfPair(maps[0], edits[0], edited, str(ctx.known[maps[0].task].drawn_by))


def photo_drawing(task: PlanTask, by_id: dict[int, PlanTask], ctx: PlanContext) -> tuple[str, str, str] | None:
    """``(image argument, value, map task)`` when ``task`` draws along a condition map (``map_by`` in the
    task table) but its image is a picture, not a map: a file the user gives with this request
    (``ctx.given``), or an earlier task's image that is no condition map (a generated picture, another
    drawing); and the task that makes the map is known. None otherwise (``references.drawings_on_photos``;
    a map of another kind, hed-control's soft edges for canny-text-to-image, is read as written)."""
    spec = ctx.known.get(task.task)
    maker = ctx.known.get(spec.map_by) if spec is not None and spec.map_by else None
    if maker is None or ctx.request is None or not any(a.kind == "image" for a in maker.args):
        return None
    image = next((a.name for a in spec.args if a.kind == "image"), None)
    value = task.args.get(image) if image is not None else None
    if not isinstance(value, str):
        return None
    ref = whole_ref(value)
    if ref is None:
        return (image, value, maker.name) if ctx.gives(value) else None
    source = ctx.known.get(by_id[ref].task) if ref in by_id else None
    if source is None or not source.produces("image") or is_map_maker(source.name, ctx):
        return None
    return image, value, maker.name


def own_marks(task: PlanTask, by_id: Mapping[int, PlanTask], ctx: PlanContext) -> tuple[str, PlanTask] | None:
    """``(argument, earlier task)`` when ``task`` reads the whole output of an earlier task of the same name that it
    cannot take further: the picture such a task made of its own input, when it marks what it reads (an analysis
    that draws its findings on a copy: it makes an image and ``data``, boxes, masks, keypoints; or a condition
    map, ``is_map_maker``), or the output of a task it would leave as it is (``settled_by`` in the task table:
    a translation of a translation into the same language, ``tgt_lang`` written alike in both). Detecting objects
    in the picture a detection drew, estimating the depth of a depth map or translating a French text into
    French finds nothing the first step did not: no correct plan has such a step
    (``references.own_marks_read``). None otherwise."""
    spec = ctx.known.get(task.task)
    if spec is None:
        return None
    marks = "image" in spec.outputs and ("data" in spec.outputs or is_map_maker(spec.name, ctx))
    for arg in spec.args:
        value = task.args.get(arg.name)
        source = by_id.get(whole_ref(value)) if isinstance(value, str) else None
        if source is None or source.task != task.task or source.id == task.id:
            continue
        if marks and arg.kind == "image":
            return arg.name, source
        if spec.settled_by and all(_same_setting(task.args.get(name), source.args.get(name))
                                   for name in spec.settled_by):
            return arg.name, source
    return None


def own_marks_read_as(source: PlanTask, ctx: PlanContext) -> str:
    """What a step found by ``own_marks`` reads, in words: the picture ``source`` drew of its own input, or its
    output with the same ``settled_by`` values."""
    settled = ctx.known[source.task].settled_by
    if settled:
        return f"reads the output of task {source.id} ({source.task}) with the same {', '.join(settled)}"
    return f"reads the picture task {source.id} ({source.task}) drew of its own input"


def _same_setting(mine: object, theirs: object) -> bool:
    """Whether two values of a setting are both written (no reference) and alike, letter case and spaces aside."""
    return (isinstance(mine, str) and isinstance(theirs, str) and bool(mine.strip()) and not CANONICAL_REF.search(mine)
            and mine.strip().casefold() == theirs.strip().casefold())


def is_map_maker(name: str, ctx: PlanContext) -> bool:
    """Whether the task ``name`` makes a condition map: some drawing's ``map_by``, or a task with a drawing
    along its output (``drawn_by``)."""
    return name in map_makers(ctx.known)


class MediaText(NamedTuple):
    """A media file given to a task as a text (``media_as_text``): which argument, the file, its kind, and
    what reads it: the task that does the same job on that kind of file (``sibling``), else the task whose
    output is that file's text (``reader``)."""

    arg: str
    file: str
    kind: str
    sibling: str | None
    reader: str | None


def media_as_text(task: PlanTask, ctx: PlanContext) -> MediaText | None:
    """A text argument of ``task`` that is wholly a media file the request names, when the task takes no
    such file itself (a drawing along a condition map takes an image, but that is its map: a picture as
    its text says what to draw, "the pose of d.jpg, the content of e.jpg"): ``sibling`` is the known task
    that does ``task``'s job on that kind of file (``on_media`` in the task table: feature-extraction's
    image one is image-feature-extraction) when that task has each argument it needs once the file is its
    input (text-generation's, image-text-to-text, needs a text besides the picture), else, for a task that
    makes no image or video from its text
    or draws along a map, ``reader`` is the known task giving that file's text (``text_of``: image-to-text,
    automatic-speech-recognition). An image edit whose prompt is a file is left alone (TaskBench's gold
    gives image-to-image a target picture as its prompt). None when neither is known
    (``references.media_read_as_text``)."""
    spec = ctx.known.get(task.task)
    if spec is None or ctx.request is None:
        return None
    for arg in spec.args:
        value = task.args.get(arg.name)
        if arg.value_kind != "text" or not isinstance(value, str) or not readable_media(value, ctx):
            continue
        kind = media_kind_of(value)
        if kind is None or (any(a.kind == kind for a in spec.args) and not spec.draws_on_map):
            continue
        sibling = media_sibling(spec, kind, ctx.known)
        if sibling is not None and all(a.kind == kind or (a.name != arg.name and a.name in task.args)
                                       for a in sibling.required_args):
            return MediaText(arg.name, value, kind, sibling.name, None)
        if any(k in spec.outputs for k in ("image", "video")) and not spec.draws_on_map:
            continue
        reader = text_reader(kind, ctx)
        if reader is not None:
            return MediaText(arg.name, value, kind, None, reader)
    return None


def text_reader(kind: str, ctx: PlanContext) -> str | None:
    """The known task giving the text of a file of ``kind`` (``text_of`` in the task table: image-to-text for
    an image, automatic-speech-recognition for an audio) that takes such a file; None when none is."""
    return next((n for n, other in ctx.known.items() if kind in other.text_of
                 and any(a.kind == kind for a in other.args)), None)


def media_sibling(spec: TaskSpec, kind: str, known: Mapping[str, TaskSpec]) -> TaskSpec | None:
    """The offered task that does ``spec``'s job on a file of ``kind`` (``on_media`` in the task table:
    feature-extraction's image one is image-feature-extraction) and takes such a file; None when none is."""
    name = spec.on_media.get(kind)
    sibling = known.get(name) if name else None
    return sibling if sibling is not None and any(a.kind == kind for a in sibling.args) else None


def readable_media(value: str, ctx: PlanContext) -> bool:
    """Whether a media argument's ``value`` (no reference) can be read: a URL, or a file name or path
    that the request names."""
    return "://" in value or ((media_kind_of(value) is not None or looks_like_path(value)) and ctx.names_file(value))


def unreadable_table(value: str, ctx: PlanContext) -> bool:
    """Whether a table argument's ``value`` (a text, no reference) is no table file the request gives. A
    table is read as a file (``tools/resources/tables.read_table``: inline rows are a mapping, never a
    text), so a text of the model's own (a passage quoted from the request, a question) cannot run as one,
    nor a picture, a sound or a video (``table_shown_as``)."""
    return table_shown_as(value) is not None or not readable_media(value, ctx)


def article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (an English word of ours: a kind's name)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def table_shown_as(value: str) -> str | None:
    """The media kind of the files a table argument's ``value`` names, when it names files of that one kind
    and no table file (``charts/q3.png``; ``a.jpg,b.jpg``): a table task reads a table file, never a table
    shown in a picture (a chart, a photo of a sheet), which a task reading that kind answers about."""
    if table_files(value):
        return None
    kinds = [kind for kind, files in request_files(value).items() if files]
    return kinds[0] if len(kinds) == 1 else None


def is_placeholder(value: str, ctx: PlanContext) -> bool:
    """Whether a text argument's ``value`` is a whole placeholder (``{caption}``, ``$1``, ``<output>``)
    that the request does not write itself."""
    text = value.strip()
    return len(text) <= _MAX_PLACEHOLDER and _PLACEHOLDER.fullmatch(text) is not None and text not in (ctx.request or "")
