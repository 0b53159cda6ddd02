"""Preference passes: changes to a plan that can run. Each keeps every correct plan unchanged, in any
language (the gold-fidelity test, ``tests/agent/test_gold_fidelity.py``, holds them to it), so
each reads only the plan, the task table and what the request gives (files, the message as a whole),
never the request's words; one compares the planner's own words for a step with the conversation's
earlier asks letter for letter, which holds in any script.
"""

from __future__ import annotations

import re

from hugginggpt.agent.plan.check import half_pair, media_sibling, text_reader
from hugginggpt.agent.plan.context import PlanContext, answer_text, given_files
from hugginggpt.agent.plan.model import (CANONICAL_REF, Plan, PlanTask, Repair, done_on_file, refs_in,
                                         replace_refs, whole_ref, work_key)
from hugginggpt.agent.plan.references import completed, reading_made
from hugginggpt.tools.resources.mentions import media_kind_of, request_files, same_file
from hugginggpt.tools.table import MEDIA_KINDS


def without_repeated_analyses(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A step that repeats an earlier step exactly (the same task on the same arguments) is taken out
    when its task analyses rather than makes (it returns ``data``: a classifier, a detector, a
    similarity): it would compute the same result again. The tasks that read it read the earlier
    step. Two identical makers (two pictures of one text) stay here; the planner asks once more for a plan
    that still has such a pair (``check.repeated_steps``)."""
    first_of: dict[tuple[str, str], PlanTask] = {}
    moved: dict[int, int] = {}
    repairs: list[Repair] = []
    for step in plan.tasks:
        key = work_key(step.task, replace_refs(step.args, moved))
        first = first_of.get(key)
        if first is None or "data" not in ctx.known[step.task].outputs:
            first_of.setdefault(key, step)
            continue
        moved[step.id] = first.id
        readers = [t for t in plan.tasks if t is not step and step.id in t.references()]
        repairs.append({"task_id": step.id, "reason": f"taken out: repeats task {first.id} ({step.task}) on the same "
                                                      "arguments" + (f"; the tasks that read it read task {first.id}"
                                                                     if readers else "")})
    if not moved:
        return plan, repairs
    return plan.merged(moved), repairs


_NOT_WORD = re.compile(r"\W+")


def _bare(text: str) -> str:
    """``text`` without punctuation, spaces or letter case: how a quoted message compares with the message."""
    return _NOT_WORD.sub("", text).casefold()


def without_analyses_of_the_message(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A task that analyses a text (it returns ``data``: a classifier, a tagger, extractive question
    answering, an embedding) given the user's whole message as that text, in a request that gives no file
    and follows no earlier turn, is taken out, with the tasks that read it. Such a message is addressed
    to the assistant (a greeting, thanks, a question about it), which answers it directly: a text given
    to analyse is quoted in, or attached to, a message that says what to do with it. Tasks that make
    something from the whole message (text-generation, text-to-image) stay."""
    if not ctx.request or ctx.given:
        return plan, []
    message = _bare(ctx.request)
    if not message:
        return plan, []
    out: set[int] = set()
    repairs: list[Repair] = []
    for step in plan.tasks:
        spec = ctx.known.get(step.task)
        if spec is None or "data" not in spec.outputs:
            continue
        texts = [step.args.get(a.name) for a in spec.args if a.value_kind == "text"]
        if any(isinstance(v, str) and _bare(v) == message for v in texts):
            out.add(step.id)
            repairs.append({"task_id": step.id, "reason": f"taken out: {step.task} would analyse the user's whole "
                                                          "message, which gives no text to analyse (answered directly)"})
    if not out:
        return plan, repairs
    for step in plan.readers_of(out):
        repairs.append({"task_id": step.id, "reason": f"taken out: reads a task taken out ({step.task})"})
        out.add(step.id)
    return plan.model_copy(update={"tasks": [t for t in plan.tasks if t.id not in out]}), repairs


QUOTE_MIN_LETTERS = 8
"""The fewest letters (spaces and punctuation aside) a step's words need to count as quoting an earlier ask."""
QUOTE_SLACK = 3
"""How many of a step's letters may lie outside the earlier ask it quotes (an article, a plural)."""


def quoted_ask(step: str | None, turns: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The latest earlier turn (its ask, the answer it got) whose ask holds the words ``step`` as one run, but for
    at most ``QUOTE_SLACK`` letters, compared without letter case, spaces or punctuation (any script); None when
    no ask does or the words are too short to tell (``QUOTE_MIN_LETTERS``). A run that long starts within the
    first ``QUOTE_SLACK`` letters, so a few substring searches decide it, in linear time however long the texts."""
    words = _bare(step or "")
    if len(words) < QUOTE_MIN_LETTERS:
        return None
    run = len(words) - QUOTE_SLACK
    for ask, answer in reversed(turns):
        letters = _bare(ask)
        if any(words[start:start + run] in letters for start in range(QUOTE_SLACK + 1)):
            return ask, answer
    return None


def _made_files(ask: str, answer: str, kinds: tuple[str, ...] = tuple(MEDIA_KINDS)) -> list[str]:
    """The media files of ``kinds`` an earlier answer names that its ask did not: the files that turn made."""
    asked = [f for names in request_files(ask).values() for f in names]
    return [f for kind in kinds for f in request_files(answer)[kind] if not any(same_file(f, a) for a in asked)]


def _result_in(answer: str, ask: str, kind: str) -> str | None:
    """What an earlier answer holds for a task reading its result as ``kind``: the one file of that media kind it
    made (``_made_files``), or for a text, its text (``context.answer_text``); None when it holds no such thing."""
    if kind in MEDIA_KINDS:
        made = _made_files(ask, answer, (kind,))
        return made[0] if len(made) == 1 else None
    if kind == "text" and answer.strip():
        return answer_text(answer)
    return None


def _read_from(value: object, source: int, kind: str, result: str) -> object | None:
    """An argument ``value`` with its readings of task ``source`` replaced by ``result`` (a file for a media
    argument, which must be the whole reference; a text, in place, for a text); None when that cannot be."""
    if isinstance(value, list):
        items = [_read_from(v, source, kind, result) for v in value]
        return None if any(v is None for v in items) else items
    if source not in refs_in(value):
        return value
    if not isinstance(value, str):
        return None
    if kind in MEDIA_KINDS:
        return result if whole_ref(value) == source else None
    return CANONICAL_REF.sub(lambda m: result if int(m.group(1)) == source else m.group(0), value)


def without_earlier_asks(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A step whose words (the planner's ``step``) are an earlier ask of the conversation, quoted (``quoted_ask``:
    "write a two-line poem about the sea" when the user asked that one turn ago and now asks "and translate that
    into German"), does that ask's work again: its result is already in the answer the ask got. Such a step is
    taken out, and each task that read it reads that answer's result instead: the one file of the kind it reads
    that the answer names (a picture made), or the answer's text. Nothing changes when the step reads a result of
    this plan or a file the user gives with this request, or reads what that turn made for another task of the plan
    to use (new work), when a task reading it needs what the answer does not hold, or when every step of the plan
    would go (the user asks for it again)."""
    if not ctx.turns or len(plan.tasks) < 2:
        return plan, []
    out: dict[int, tuple[str, str]] = {}
    read_later = {ref for t in plan.tasks for ref in t.references()}
    for step in plan.tasks:
        turn = quoted_ask(step.step, ctx.turns)
        if turn is None or step.references() or any(
                isinstance(v, str) and ctx.gives(v) for v in step.args.values()):
            continue
        made = _made_files(*turn) if step.id in read_later else []
        if any(isinstance(v, str) and same_file(v, file) for v in step.args.values() for file in made):
            continue  # it works on what that turn made, for a task of this plan: new work
        out[step.id] = turn
    if not out or len(out) == len(plan.tasks):
        return plan, []
    tasks: list[PlanTask] = []
    repairs: list[Repair] = []
    for step in plan.tasks:
        if step.id in out:
            continue
        args = dict(step.args)
        spec = ctx.known[step.task]
        for source in sorted(step.references() & out.keys()):
            ask, answer = out[source]
            for name, value in args.items():
                if source not in refs_in(value):
                    continue
                arg = spec.find_arg(name)
                result = _result_in(answer, ask, arg.value_kind) if arg is not None else None
                moved = _read_from(value, source, arg.value_kind, result) if result is not None else None
                if moved is None:
                    return plan, []  # this reader needs what the earlier answer does not hold
                args[name] = moved
        tasks.append(step if args == step.args else step.model_copy(update={"args": args}))
    for source, (ask, _) in out.items():
        readers = [t.id for t in plan.tasks if source in t.references()]
        repairs.append({"task_id": source, "reason": (
            f"taken out: its step is the earlier ask {ask[:80]!r}, whose answer holds the result"
            + (f"; tasks {readers} read that answer's result" if readers else ""))})
    return plan.model_copy(update={"tasks": tasks}), repairs


def _reads_file(step: PlanTask, file: str) -> list[str]:
    """The names of ``step``'s arguments whose whole value is ``file`` (as written, or by its last path part)."""
    return [name for name, value in step.args.items() if isinstance(value, str) and same_file(value, file)]


def each_listed_file(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """Files the user's words write as a list (``PlanContext.lists``: ``take1.wav, take2.wav``) are like
    inputs; files attached to the request are not read as a list. When one task reads one file of such
    a list and no task reads the others, that task and the tasks reading it (directly or not) are
    repeated for each unread file, in the list's order, the copies reading the copies: "denoise
    take1.wav, take2.wav and transcribe them" gets two chains. Likewise when each file of the list is read
    by one task, the same task for each, and only one of those has tasks reading it: the tasks reading it
    are repeated for each of the others, reading it instead ("caption beach1.jpg and beach2.jpg, then
    translate the captions": two translations, where the answer translated the first caption only). Nothing
    changes when the plan reads a file of the list twice, when a repeated task would also read a task outside
    the chain, or when the copies would pass the plan's task limit."""
    if not ctx.request or not ctx.given or not plan.tasks:
        return plan, []
    repairs: list[Repair] = []
    for files in ctx.lists:
        files = [f for f in files if ctx.gives(f)]
        if len(files) < 2:
            continue
        reading = {f: [t for t in plan.tasks if _reads_file(t, f)] for f in files}
        read = [f for f in files if reading[f]]
        if any(len(reading[f]) > 1 for f in read):
            continue
        tasks = list(plan.tasks)
        if len(read) == 1:  # the other files unread: the reader and its chain repeated for each
            first = reading[read[0]][0]
            chain = [first, *plan.readers_of({first.id})]
            unread = [f for f in files if f != read[0]]
            if not _copyable(plan, chain[1:], {t.id for t in chain}, len(chain) * len(unread), ctx):
                continue
            for file in unread:
                copies = _copy_chain(tasks, chain, update={first.id: {n: file for n in _reads_file(first, read[0])}})
                repairs.append({"task_id": first.id, "reason": (
                    f"{file!r} is listed with {read[0]!r}, which task {first.id} ({first.task}) reads: tasks "
                    f"{sorted(t.id for t in chain)} repeated for it as tasks {copies}")})
        elif len(read) == len(files):  # each read by the same task: the one chain continued repeated for the others
            firsts = [reading[f][0] for f in files]
            chained = [t for t in firsts if plan.readers_of({t.id})]
            if len({t.task for t in firsts}) != 1 or len(chained) != 1:
                continue
            first, chain = chained[0], plan.readers_of({chained[0].id})
            others = [t for t in firsts if t is not first]
            if not _copyable(plan, chain, {first.id, *(t.id for t in chain)}, len(chain) * len(others), ctx):
                continue
            for other in others:
                copies = _copy_chain(tasks, chain, reads_instead={first.id: other.id})
                repairs.append({"task_id": first.id, "reason": (
                    f"task {other.id} ({first.task}) does on another file of the list what task {first.id} does: the "
                    f"tasks reading task {first.id}, {sorted(t.id for t in chain)}, repeated for it as tasks {copies}")})
        else:
            continue
        plan = plan.model_copy(update={"tasks": tasks})
    return plan, repairs


def _copyable(plan: Plan, readers: list[PlanTask], inside: set[int], added: int, ctx: PlanContext) -> bool:
    """Whether a chain can be copied: each of its ``readers`` reads only tasks of ``inside`` (the chain and the
    task it continues from), and ``added`` more tasks keep the plan within its task limit."""
    return (not any(t.references() - inside for t in readers)
            and (ctx.max_tasks is None or len(plan.tasks) + added <= ctx.max_tasks))


def _copy_chain(tasks: list[PlanTask], chain: list[PlanTask], *, update: dict[int, dict[str, str]] | None = None,
                reads_instead: dict[int, int] | None = None) -> list[int]:
    """Append to ``tasks`` a copy of ``chain`` under fresh ids, the copies reading the copies; ``update``: new
    values of some arguments of a chain task (by its id: another file of the list); ``reads_instead``: a task
    outside the chain the copies read in place of another (the first task's twin on another file). Returns the
    copies' ids."""
    base = max(t.id for t in tasks) + 1
    moved = {t.id: base + i for i, t in enumerate(chain)}
    redirect = {**moved, **(reads_instead or {})}
    for step in chain:
        args = {**replace_refs(step.args, redirect), **(update or {}).get(step.id, {})}
        tasks.append(step.model_copy(update={"id": moved[step.id], "args": args, "step": None,
                                             "dep": [redirect.get(d, d) for d in step.dep]}))
    return sorted(moved.values())


def given_files_named_in_texts(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A file the user gives with this request that no task reads, written inside the text a task is given,
    is what that task is to work on:

    - when the task table says which task does its job on that kind of file (``on_media``: "generate
      embeddings of shots/p1.png" as feature-extraction's text is image-feature-extraction of it), that
      task reads the file instead, its other arguments kept where it has them (the text must name that
      one given file and no other);
    - else, when that text is what the task works on (its one required argument) or a drawing's content,
      the text reads the task giving the file's text (``text_of``: image-to-text for a picture,
      automatic-speech-recognition for a recording), the plan's own or one added right before: a drawing
      along a condition map (``map_by``) whose text names the content's picture ("the pose of d.jpg, the
      content of e.jpg") draws what that picture shows; "a scene described in example.wav" as a picture's
      text is drawn from the recording's transcript. A question or an instruction about another input (a
      visual question, question answering's question) stays: a caption is no question.

    Only file names and kinds are read, never the words around them; a text the request holds as written
    (a passage the user quotes), a file some task already reads and a file of a kind no task turns into a
    text stay as they are."""

    def complete(tasks: list[PlanTask], position: int) -> tuple[list[PlanTask], int, str] | None:
        step = tasks[position]
        spec = ctx.known[step.task]
        for name, value in step.args.items():
            arg = spec.find_arg(name)
            if arg is None or arg.value_kind != "text" or not isinstance(value, str):
                continue
            if value.strip() in (ctx.request or ""):
                continue  # words the user wrote (a quoted passage naming a file) are what to work on
            named = list(dict.fromkeys(f for f in given_files(value) if ctx.gives(f)))
            elsewhere = [f for f in named if not any(_reads_file(o, f) for o in tasks if o.id != step.id)]
            unread = elsewhere if spec.on_media else [f for f in elsewhere if not _reads_file(step, f)]
            # one given file among other words (a text that is wholly a file is the media-text pass's case)
            if len(unread) != 1 or value.strip(" '\"") == unread[0]:
                continue
            file, kind = unread[0], media_kind_of(unread[0])
            if kind is None:
                continue
            sibling = media_sibling(spec, kind, ctx.known) if named == unread else None
            if sibling is not None:
                tasks = [*tasks[:position], done_on_file(step, name, file, sibling, kind, keep=True), *tasks[position + 1:]]
                return tasks, position, (f"{step.task} was given a text naming {file!r}, which the user gives and no "
                                         f"task reads: {sibling.name} reads it")
            # a text that is what the task works on (its one required argument), or a drawing's content: not
            # a question or an instruction about another input, which a caption or transcript cannot replace
            works_on = [a.name for a in spec.required_args] == [name]
            reader = text_reader(kind, ctx) if works_on or spec.draws_on_map else None
            if reader is not None:
                tasks, position, how = reading_made(tasks, position, name, reader, file, ctx)
                what = "it draws what the file shows" if spec.draws_on_map else f"it reads the file's {reader} text"
                return tasks, position, (f"{step.task} was given a text naming {file!r}, which the user gives and no "
                                         f"task reads: {what}, {how}")
        return drawn_from_step_words(tasks, position) if spec.draws_on_map else None

    def drawn_from_step_words(tasks: list[PlanTask], position: int) -> tuple[list[PlanTask], int, str] | None:
        # a drawing whose text names no file, where its own words (``step``), or those of the map it reads, name one
        # picture the user gives that no task reads: what to draw is what that picture shows
        step = tasks[position]
        spec = ctx.known[step.task]
        text = next((a.name for a in spec.args if a.value_kind == "text"), None)
        value = step.args.get(text) if text is not None else None
        if not isinstance(value, str) or whole_ref(value) is not None or given_files(value):
            return None
        by_id = {t.id: t for t in tasks}
        image = next((step.args.get(a.name) for a in spec.args if a.kind == "image"), None)
        map_task = by_id.get(whole_ref(image)) if isinstance(image, str) else None
        speakers = [step, map_task] if map_task is not None and map_task.task == spec.map_by else [step]
        named = dict.fromkeys(f for t in speakers if t.step for f in given_files(t.step) if ctx.gives(f))
        unread = [f for f in named if media_kind_of(f) == "image" and not any(_reads_file(t, f) for t in tasks)]
        reader = text_reader("image", ctx) if len(unread) == 1 else None
        if reader is None:
            return None
        tasks, position, how = reading_made(tasks, position, text, reader, unread[0], ctx)
        return tasks, position, (f"{step.task} has no file in its text, and its step names {unread[0]!r}, which the "
                                 f"user gives and no task reads: it draws what the file shows, {how}")

    return completed(plan, complete)


def edits_beside_unread_maps(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """The edit of another photo beside a condition map nobody reads (``check.half_pair``) becomes the drawing
    along that map (its ``drawn_by``), the pair's second half, with that photo's content as what to draw: its
    text reads the photo's caption (``text_reader``), as a drawing given a picture as its text reads it ("the
    pose of dancer.jpg, the content of park.jpg"). Left as it is when no task gives a picture's text. No correct
    plan makes a map that nothing reads beside an edit of another photo: a map alone is the result; a pair's
    drawing reads its map."""
    found = half_pair(plan, ctx)
    reader = text_reader("image", ctx) if found is not None else None
    if reader is None:
        return plan, []
    target = ctx.known[found.drawing]
    into_image = next((a.name for a in target.args if a.kind == "image"), None)
    into_text = next((a.name for a in target.args if a.kind == "text"), None)
    if into_image is None or into_text is None:
        return plan, []
    tasks = list(plan.tasks)
    position = tasks.index(found.edit)
    args = {into_image: f"<resource>-{found.map_task.id}", into_text: found.photo}
    tasks[position] = found.edit.model_copy(update={"task": found.drawing, "args": args})
    tasks, position, made = reading_made(tasks, position, into_text, reader, found.photo, ctx)
    reason = (f"{found.edit.task} of {found.photo!r} beside task {found.map_task.id}'s {found.map_task.task} map, "
              f"which no task reads: drawn along that map by {found.drawing}, {found.photo!r} (its caption) what "
              f"to draw: {made}")
    return plan.model_copy(update={"tasks": tasks}), [{"task_id": tasks[position].id, "reason": reason}]
