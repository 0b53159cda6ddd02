"""Validity passes on what arguments read: a reference to the task itself or to no task, a media file
that neither the request nor an earlier task has, a placeholder written instead of a reference, a
reference to a task that makes no output of the argument's kind, and an analysis of the picture the same
task drew (``own_marks_read``). Each of these fails when it runs; the argument then reads the nearest
earlier task that makes its kind, else the request's one file of that kind, else it is left for
``runnable_graph`` to reject (or execution to report).

These passes read only kinds (the task table's), file names and the plan's own graph: nothing in them
depends on the request's language. A plan whose arguments all read what they can read comes back
unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hugginggpt.agent.plan.check import (article, is_placeholder, map_misread, media_as_text, own_marks,
                                         own_marks_read_as, photo_drawing, readable_media, table_shown_as,
                                         unreadable_table)
from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.model import (CANONICAL_REF, Plan, PlanTask, Repair, done_on_file, media_read,
                                         replace_refs, whole_ref)
from hugginggpt.agent.plan.validity import rejected
from hugginggpt.tools.resources.mentions import last_part, looks_like_path, media_kind_of
from hugginggpt.tools.table import MEDIA_KINDS, ArgSpec, TaskSpec


Fix = Callable[[PlanTask, int, str, str, str], str]


class _ArgumentWalk:
    """Applies ``fix(task, position, name, kind, value)`` to each string value of each argument (each
    item of a list) of a plan, collecting the repairs the fix records; tasks are copied when changed."""

    def __init__(self, plan: Plan, ctx: PlanContext):
        self.plan = plan
        self.ctx = ctx
        self.repairs: list[Repair] = []
        self.out: set[int] = set()

    def note(self, task: PlanTask, reason: str) -> None:
        self.repairs.append({"task_id": task.id, "reason": reason})

    def reject(self, task: PlanTask, name: str, kind: str, what: str,
               why: str = "which is no file of the request and no earlier result") -> None:
        """Take ``task`` out: its argument ``name`` of ``kind`` reads ``what``, which gives no such input (``why``)."""
        if task.id in self.out:
            return
        self.out.add(task.id)
        given = self.ctx.files.get(kind, ()) if kind in MEDIA_KINDS else ()
        has = (f"the request's {kind} files are {', '.join(repr(f) for f in given[:5])}" if given
               else f"the request gives no {kind}")
        makers = makers_of(self.ctx.known, kind) if kind in MEDIA_KINDS else []  # no task makes a table file
        made = (f"; a task can make one first: {', '.join(makers)}" if makers else "")
        self.repairs.append(rejected(task, f"task {task.id} ({task.task}): argument {name!r} reads {what}, {why} "
                                           f"({has}{made})"))

    def one_file_or_reject(self, task: PlanTask, name: str, kind: str, value: str) -> str:
        """What argument ``name`` reads instead of ``value``, a file the request does not give: the request's
        one file of ``kind`` (a media kind or ``table``) when it gives exactly one, else ``value`` with
        ``task`` taken out."""
        file = self.ctx.one_file(kind)
        if file is not None and file != value:
            self.note(task, f"argument {name!r}: {value!r} is not in the request; using its {kind} {file!r}")
            return file
        self.reject(task, name, kind, repr(value[:60]))
        return value

    def producer(self, position: int, kind: str) -> PlanTask | None:
        """The nearest earlier task whose output can fill an argument of ``kind``."""
        for earlier in reversed(self.plan.tasks[:position]):
            if self.ctx.known[earlier.task].produces(kind):
                return earlier
        return None

    def reread(self, task: PlanTask, position: int, kind: str, value: str, refs: list[int], said: str,
               verbs: tuple[str, str]) -> str:
        """``value`` with its references to ``refs`` reading the nearest earlier task making ``kind``
        instead, else (a whole reference, of a media kind) the request's one file of that kind; as it is
        when there is neither. The repair's reason opens with ``said``, then ``verbs`` (to a task, to a
        file) and the new source."""
        source = self.producer(position, kind)
        if source is not None:
            self.note(task, f"{said} {verbs[0]} task {source.id} ({source.task}), the nearest earlier {kind} producer")
            return replace_refs(value, {n: source.id for n in refs})
        file = self.ctx.one_file(kind) if kind in MEDIA_KINDS else None
        if whole_ref(value) is not None and file is not None:
            self.note(task, f"{said} {verbs[1]} the request's {kind} {file!r}")
            return file
        return value

    def run(self, fix: Fix, kinds: tuple[str, ...] | None = None) -> tuple[Plan, list[Repair]]:
        tasks: list[PlanTask] = []
        for position, task in enumerate(self.plan.tasks):
            info = self.ctx.known[task.task]
            args: dict[str, Any] = {}
            for name, value in task.args.items():
                arg = info.find_arg(name)
                kind = arg.value_kind if arg is not None else "text"
                if kinds is not None and kind not in kinds:
                    args[name] = value
                elif isinstance(value, list):
                    args[name] = [fix(task, position, name, kind, v) if isinstance(v, str) else v for v in value]
                else:
                    args[name] = fix(task, position, name, kind, value) if isinstance(value, str) else value
            tasks.append(task if args == task.args else task.model_copy(update={"args": args}))
        tasks = [task for task in tasks if task.id not in self.out]
        return self.plan.model_copy(update={"tasks": tasks}), self.repairs


def readable_references(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A reference to the task itself or to a task the plan does not have, a media argument naming a
    file the request does not name (no URL either), and a text argument that is a whole placeholder
    (``{caption}``, ``$1``, ``<output of task 0>``) read the nearest earlier task making the
    argument's kind, else (a whole reference or a media file) the request's one file of that kind; a text
    argument that is such a whole reference, with no earlier task writing a text, reads the text of the
    conversation's last answer when there is one (a follow-up's "summarize it": the transcript just given). A table
    argument naming pictures, sounds or videos only takes its task out (no table task reads a table shown in a
    picture: ``check.table_shown_as``). A table argument that is no file the request gives reads the one file of
    the request its text holds among other words, else the request's one table file; with neither its task is
    taken out (a text is no table: a passage of the request written as a table cannot run), and a later text
    argument that is its whole output reads that passage instead (a question answered from the "classified"
    document reads the document)."""
    walk = _ArgumentWalk(plan, ctx)
    ids = {t.id for t in plan.tasks}
    passed: dict[int, str] = {}  # a task taken out for a text given as its table: that text

    def fix(task: PlanTask, position: int, name: str, kind: str, value: str) -> str:
        refs = [int(n) for n in CANONICAL_REF.findall(value)]
        if refs:
            broken = [n for n in refs if n == task.id or n not in ids]
            if not broken:
                source = whole_ref(value)
                if kind == "text" and source in passed:
                    walk.note(task, f"argument {name!r} read task {source}, taken out for a text given as its table: "
                                    "reads that text")
                    return passed[source]
                return value
            what = ", ".join("its own output" if n == task.id else f"missing task {n}" for n in broken)
            read = walk.reread(task, position, kind, value, broken, f"argument {name!r}: {what}",
                               ("pointed to", "replaced by"))
            if read == value and kind == "text" and whole_ref(value) is not None and ctx.answer_before:
                walk.note(task, f"argument {name!r}: {what}, and no earlier task writes a text: reads the text "
                                "of the conversation's last answer")
                return ctx.answer_before
            # what no source replaces is left for runnable_graph to reject, with its reason
            return read
        if ctx.request is None:
            return value
        if kind in MEDIA_KINDS:
            if readable_media(value, ctx):
                return value
            source = walk.producer(position, kind)
            if source is not None:
                walk.note(task, f"argument {name!r}={value[:60]!r} names a file the request does not mention: "
                                f"replaced by <resource>-{source.id} ({source.task})")
                return f"<resource>-{source.id}"
            return walk.one_file_or_reject(task, name, kind, value)
        if kind == "table" and (shown := table_shown_as(value)) is not None:
            walk.reject(task, name, kind, repr(value[:60]), f"which is {article(shown)} {shown}, not a table file "
                                                              "(CSV, TSV, Excel or JSON)")
            return value
        if kind == "table" and unreadable_table(value, ctx):
            inside = ctx.file_within(value)
            if inside is not None:
                walk.note(task, f"argument {name!r}={value[:60]!r} holds the request's file {inside!r} among other "
                                f"words: reads {inside!r}")
                return inside
            read = walk.one_file_or_reject(task, name, kind, value)
            if task.id in walk.out and not looks_like_path(value):
                passed[task.id] = value
            return read
        if is_placeholder(value, ctx):
            source = walk.producer(position, kind)
            if source is not None:
                walk.note(task, f"argument {name!r}={value[:60]!r} is a placeholder for an earlier result: replaced by "
                                f"<resource>-{source.id} ({source.task})")
                return f"<resource>-{source.id}"
        return value

    return walk.run(fix)


def kind_true_references(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """An argument that reads a task making no output of the argument's kind (a text-to-speech reading
    another's audio as its text, an object detection reading a classifier's label as its image) reads
    the nearest earlier task that makes that kind instead, else (a whole reference to a media kind)
    the request's one file of that kind; with neither, a media argument takes its task out, and so does a
    text that is wholly such a reference in a task no other task reads (text-to-audio of a depth map: it
    cannot run, and taking it out takes nothing else with it; with ``PlanContext.made_from``, such a text of a
    task making only media reads the text the read result was made from, ``made_from_text``); other texts are
    left for execution. Only
    text and media arguments, and only tasks whose outputs are known, are checked. A task that was read
    only by arguments this pass sent to another task is no longer read: the pass runs once more on the
    plan it made, and a text of that task which is wholly such a reference takes it out too (a feature
    extraction of a drawing, read as the image of the next step, which now reads the drawing itself)."""
    fixed, repairs = _kind_true_once(plan, ctx)
    if _read_ids(fixed) >= _read_ids(plan) & {t.id for t in fixed.tasks}:
        return fixed, repairs
    again, more = _kind_true_once(fixed, ctx)
    return again, [*repairs, *more]


def _read_ids(plan: Plan) -> set[int]:
    """The ids of the tasks of ``plan`` that a task of it reads."""
    return {n for t in plan.tasks for n in t.references()}


def _kind_true_once(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """One walk of ``kind_true_references`` over ``plan``."""
    walk = _ArgumentWalk(plan, ctx)
    by_id = plan.by_id
    read = _read_ids(plan)

    def fix(task: PlanTask, position: int, name: str, kind: str, value: str) -> str:
        wrong = sorted({n for n in map(int, CANONICAL_REF.findall(value))
                        if n in by_id and n != task.id and ctx.known[by_id[n].task].outputs
                        and not ctx.known[by_id[n].task].produces(kind)})
        if not wrong:
            return value
        made = ", ".join(f"task {n} ({by_id[n].task})" for n in wrong)
        new = walk.reread(task, position, kind, value, wrong, f"argument {name!r} read {made}, which makes no {kind}:",
                          ("now reads", "now"))
        source = by_id.get(whole_ref(value))  # type: ignore[arg-type]
        written = made_from_text(task, source, ctx) if new == value and source is not None else None
        if written is not None:
            walk.note(task, f"argument {name!r} read {made}, which makes no {kind}: reads the text task "
                            f"{source.id} made it from")  # type: ignore[union-attr]
            return written
        if new == value and (kind in MEDIA_KINDS or (whole_ref(value) is not None and task.id not in read)):
            walk.reject(task, name, kind, made, f"which makes no {kind}, and no earlier task does")
        return new

    return walk.run(fix, kinds=("text", *MEDIA_KINDS))


def made_from_text(task: PlanTask, source: PlanTask, ctx: PlanContext) -> str | None:
    """With ``ctx.made_from``: the one written text (no reference, no file) of ``source``'s arguments when
    ``task`` makes only media and ``source`` makes only media from texts alone (no media or table argument: a
    voice for a video drawn from a title speaks the title; an edit's instruction is no description of what the
    edited picture shows); None otherwise. Reads kinds only."""
    if not ctx.made_from:
        return None
    made = [ctx.known[t.task].outputs for t in (task, source)]
    if not all(outputs and all(kind in MEDIA_KINDS for kind in outputs) for outputs in made):
        return None
    info = ctx.known[source.task]
    if any(arg.value_kind in (*MEDIA_KINDS, "table") for arg in info.args):
        return None
    texts = [value for name, value in source.args.items()
             if isinstance(value, str) and value.strip() and not CANONICAL_REF.search(value)
             and (arg := info.find_arg(name)) is not None and arg.value_kind == "text"]
    return texts[0] if len(texts) == 1 else None


def own_marks_read(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A step that runs a task on the output of the same task that it cannot take further (``check.own_marks``:
    object detection of the boxes a detection drew, a mask generation of its masks, a translation of a
    translation into the same language) is taken out, and the tasks that read it read that earlier task
    instead: what the step was written for is another part of the request, which the planner asks for again.
    A step whose output stays as it is (``settled_by``: the translation) reads instead the nearest earlier result
    of the argument's kind that no task reads, when there is one ("caption a.jpg and b.jpg and translate both":
    the second translation written on the first one, b's caption left unread). Reads task names, the task table's
    ``settled_by`` and the plan's graph."""
    by_id = plan.by_id
    moved: dict[int, int] = {}
    repairs: list[Repair] = []
    tasks = list(plan.tasks)
    for position, task in enumerate(tasks):
        marked = own_marks(task, by_id, ctx)
        if marked is None:
            continue
        name, source = marked
        settled = ctx.known[task.task].settled_by
        unread = _unread_maker(tasks[:position], tasks, ctx.known[task.task].arg(name).kind, ctx) if settled else None
        if unread is not None:
            args = {**task.args, name: replace_refs(task.args[name], {source.id: unread.id})}
            tasks[position] = task = task.model_copy(update={"args": args})
            by_id = {**by_id, task.id: task}
            repairs.append({"task_id": task.id, "reason": (
                f"argument {name!r} read the output of task {source.id} ({source.task}) with the same "
                f"{', '.join(settled)}, which it would give back: now reads task {unread.id} ({unread.task}), the "
                "nearest earlier result no task read")})
            continue
        moved[task.id] = moved.get(source.id, source.id)
        why = "it would give that output back" if settled else f"{task.task} of its own marks finds nothing new"
        read = own_marks_read_as(source, ctx)
        repairs.append(rejected(task, f"task {task.id} ({task.task}): argument {name!r} {read}: {why}; each step does "
                                      "its own part of the request"))
    plan = plan.model_copy(update={"tasks": tasks}) if tasks != list(plan.tasks) else plan
    if not moved:
        return plan, repairs
    return plan.merged(moved), repairs


def _unread_maker(earlier: list[PlanTask], tasks: list[PlanTask], kind: str, ctx: PlanContext) -> PlanTask | None:
    """The last of ``earlier`` that makes ``kind`` and that no task of ``tasks`` reads; None when there is none."""
    read = {n for t in tasks for n in t.references()}
    return next((t for t in reversed(earlier) if t.id not in read and t.task in ctx.known
                 and ctx.known[t.task].produces(kind)), None)


def makers_of_what_is_read(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A task whose media argument reads an earlier task making no output of that kind (image-classification
    given a written story as its image), where no earlier task makes that kind and the request gives no file
    of it (``kind_true_references`` would take the task out), becomes the one offered task that makes what
    the plan reads from it out of what it is given: text-to-image of the story when the next task animates
    the "classification" as an image. What is read from it: the media kinds its readers' arguments take,
    and the media it makes itself when it only makes (no ``data``: an image-to-video given a text is
    text-to-video). The new task has one required argument, which reads what the old one read; with no
    such task, or several (a text read aloud or made into music), the plan is left to ``kinds``. Reads
    kinds and the plan's graph only."""
    tasks = list(plan.tasks)
    by_id = dict(plan.by_id)
    repairs: list[Repair] = []
    for position, task in enumerate(tasks):
        found = _misread_media(task, tasks[:position], by_id, ctx)
        if found is None:
            continue
        arg, source = found
        read = {media_read(reader, task.id, ctx.known) for reader in tasks[position + 1:]}
        info = ctx.known[task.task]
        if "data" not in info.outputs:
            read |= {kind for kind in MEDIA_KINDS if kind in info.outputs}
        wanted = read & set(MEDIA_KINDS)
        if not wanted:
            continue
        given = ctx.known[source.task]
        fits = [(name, into) for name, spec in ctx.known.items() if name != task.task
                for into in _only_required(spec)
                if into.value_kind in ("text", *MEDIA_KINDS) and given.produces(into.value_kind)
                and all(spec.produces(kind) for kind in wanted)]
        if len(fits) != 1:
            continue
        name, into = fits[0]
        made = task.model_copy(update={"task": name, "args": {into.name: task.args[arg.name]}})
        tasks[position] = by_id[task.id] = made
        repairs.append({"task_id": task.id, "reason": (
            f"{task.task} reads task {source.id} ({source.task}), which makes no {arg.value_kind}, "
            f"and what is read from it is {' and '.join(sorted(wanted))}: {name} makes that from what it reads")})
    if not repairs:
        return plan, repairs
    return plan.model_copy(update={"tasks": tasks}), repairs


def _misread_media(task: PlanTask, earlier: list[PlanTask], by_id: Mapping[int, PlanTask],
                   ctx: PlanContext) -> tuple[ArgSpec, PlanTask] | None:
    """(argument, source): ``task``'s media argument that is a whole reference to an ``earlier`` task making
    no output of its kind, when no earlier task makes that kind and the request gives no file of it."""
    for arg in ctx.known[task.task].args:
        kind = arg.value_kind
        source = by_id.get(whole_ref(task.args.get(arg.name)))  # type: ignore[arg-type]
        if kind not in MEDIA_KINDS or source is None or all(t.id != source.id for t in earlier):
            continue
        made = ctx.known[source.task]
        if not made.outputs or made.produces(kind):
            continue
        if not ctx.files.get(kind) and not any(ctx.known[t.task].produces(kind) for t in earlier):
            return arg, source
    return None


def _only_required(spec: TaskSpec) -> list[ArgSpec]:
    """``spec``'s one required argument, as a list of zero or one."""
    required = [a for a in spec.args if a.required]
    return required if len(required) == 1 else []


def media_read_as_text(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A task given a media file of the request as a text (``check.media_as_text``) reads it as the table
    says: it becomes the task that does its job on that kind of file (feature-extraction of ``shoe.jpg``
    is image-feature-extraction of it; other arguments kept where that task has them), else its text reads
    the output of the task giving that file's text (text-classification of ``call.wav`` reads
    automatic-speech-recognition of it: the plan's task that makes it, else one added right before).
    A file name as text is otherwise read as the words of its name."""

    def complete(tasks: list[PlanTask], position: int) -> tuple[list[PlanTask], int, str] | None:
        task = tasks[position]
        found = media_as_text(task, ctx)
        if found is None:
            return None
        if found.reader is not None:
            tasks, position, how = reading_made(tasks, position, found.arg, found.reader, found.file, ctx)
            return tasks, position, (f"{task.task} was given the file {found.file!r} as its {found.arg}: it reads "
                                     f"the file's text, {how}")
        target = ctx.known[str(found.sibling)]
        tasks[position] = done_on_file(task, found.arg, found.file, target, found.kind)
        return tasks, position, (f"{task.task} was given the file {found.file!r} as its {found.arg}: {target.name} "
                                 f"does its job on a {found.kind}")

    return completed(plan, complete)


def completed(plan: Plan, complete: Callable[[list[PlanTask], int], tuple[list[PlanTask], int, str] | None]
              ) -> tuple[Plan, list[Repair]]:
    """``plan`` with ``complete(tasks, position)`` applied to each task in turn: None leaves the task as it
    is, else ``(tasks, the task's new position, the reason)`` (tasks may be added before it)."""
    tasks = list(plan.tasks)
    repairs: list[Repair] = []
    position = 0
    while position < len(tasks):
        done = complete(tasks, position)
        if done is not None:
            tasks, position, reason = done
            repairs.append({"task_id": tasks[position].id, "reason": reason})
        position += 1
    if not repairs:
        return plan, repairs
    return plan.model_copy(update={"tasks": tasks}), repairs


def reading_made(tasks: list[PlanTask], position: int, arg: str, maker: str, file: str,
                 ctx: PlanContext) -> tuple[list[PlanTask], int, str]:
    """``tasks`` with argument ``arg`` of ``tasks[position]`` reading the output of ``maker`` run on ``file``:
    the plan's task doing that, else one added right before the reader: ``(tasks, the reader's position,
    what was done)``. An added task takes the reader's id and the ids from it on move up by one, when the
    ids are in order and every reference reads a task of the plan; else it takes the next free id."""
    into = next(a.name for a in ctx.known[maker].args if a.kind in MEDIA_KINDS)
    made = next((t for t in tasks if t.task == maker and isinstance(t.args.get(into), str)
                 and last_part(t.args[into]) == last_part(file)), None)
    if made is not None:
        made_id, how = made.id, f"task {made.id} ({maker}) makes it"
    else:
        ids = [t.id for t in tasks]
        in_order = ids == sorted(ids) and all(t.references() <= set(ids) for t in tasks)
        made_id = tasks[position].id if in_order else max(ids) + 1
        if in_order:
            shift = {t.id: t.id + 1 for t in tasks if t.id >= made_id}
            tasks = [t.model_copy(update={"id": shift.get(t.id, t.id), "args": replace_refs(t.args, shift)})
                     for t in tasks]
            file = replace_refs(file, shift)
        tasks = [*tasks[:position], PlanTask(task=maker, id=made_id, args={into: file}), *tasks[position:]]
        position, how = position + 1, f"task {made_id} ({maker}) added to make it"
    reader = tasks[position]
    tasks[position] = reader.model_copy(update={"args": {**reader.args, arg: f"<resource>-{made_id}"}})
    return tasks, position, how


def drawings_on_maps(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A text-guided image task (an edit, a restyling) whose image is the condition map of a task that
    declares its drawing task (``drawn_by``: canny-control's is canny-text-to-image) becomes that drawing
    task, its prompt the drawing's text: an edit of an edge map or a pose skeleton is no picture of anything.
    Without a text to draw, the task is rejected, naming the drawing task."""
    by_id = plan.by_id
    repairs: list[Repair] = []
    tasks: list[PlanTask] = []
    for task in plan.tasks:
        drawing = map_misread(task, by_id, ctx)
        if drawing is None:
            tasks.append(task)
            continue
        spec, target = ctx.known[task.task], ctx.known[drawing]
        image = next(a.name for a in spec.args if a.kind == "image" and whole_ref(task.args.get(a.name)) is not None)
        text = next((task.args[a.name] for a in spec.args if a.kind == "text" and task.args.get(a.name) not in (None, "")),
                    None)
        into_image = next((a.name for a in target.args if a.kind == "image"), None)
        into_text = next((a.name for a in target.args if a.kind == "text"), None)
        if text is None or into_image is None or into_text is None:
            repairs.append(rejected(task, f"task {task.id} ({task.task}) reads a condition map: a picture drawn along "
                                          f"it is {drawing}, with the text of what to draw"))
            continue
        repairs.append({"task_id": task.id, "reason": f"{task.task} reads a condition map: drawn along it by {drawing}"})
        tasks.append(task.model_copy(update={"task": drawing, "args": {into_image: task.args[image], into_text: text}}))
    if not repairs:
        return plan, repairs
    return plan.model_copy(update={"tasks": tasks}), repairs


def drawings_on_photos(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A drawing along a condition map (a task with ``map_by``: openpose-text-to-image, depth-text-to-image)
    whose image is a picture and not a map reads a map of its kind instead (``check.photo_drawing``). A
    file the user gives with this request: the map that ``map_by`` makes of that file (openpose-control,
    depth-estimation), a task of the plan that already makes it, else one added right before the drawing
    (the tasks after it renumbered). An earlier task's picture (a generated image, another drawing): the
    nearest earlier map of that kind in the plan ("draw a second kitchen along the same map"), else the
    map made of that picture, added the same way. A ControlNet drawing conditioned on a picture follows
    no pose, edges or depth. A file of the conversation before the request (a map made earlier) is read
    as written."""

    def complete(tasks: list[PlanTask], position: int) -> tuple[list[PlanTask], int, str] | None:
        if not ctx.known[tasks[position].task].draws_on_map:  # the id index below is built for drawings alone
            return None
        found = photo_drawing(tasks[position], {t.id: t for t in tasks}, ctx)
        if found is None:
            return None
        image, value, maker = found
        drawing = tasks[position]
        if whole_ref(value) is not None:
            earlier = next((t for t in reversed(tasks[:position]) if t.task == maker), None)
            if earlier is not None:
                tasks = list(tasks)
                args = {**drawing.args, image: f"<resource>-{earlier.id}"}
                tasks[position] = drawing.model_copy(update={"args": args})
                return tasks, position, (f"{drawing.task} draws along a map, not on the picture {value!r}: it reads "
                                         f"the nearest earlier map of its kind, task {earlier.id} ({maker})")
        tasks, position, how = reading_made(tasks, position, image, maker, value, ctx)
        return tasks, position, (f"{tasks[position].task} draws along the map {maker} makes, not on the picture "
                                 f"{value!r}: {how}")

    return completed(plan, complete)


def makers_of(known: Mapping[str, TaskSpec], kind: str) -> list[str]:
    """The first four known tasks that make ``kind`` from no input of that kind (from a text, or from nothing)."""
    return [name for name, spec in known.items()
            if spec.produces(kind) and "data" != kind and not any(a.kind == kind for a in spec.args)][:4]
