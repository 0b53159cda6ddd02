"""Steps nobody asked for: a plan's end product of a kind the request never mentions is dropped, and
a text-generation or image-classification step that the request never asks for is taken out.

Small planners append a step out of habit: a text-to-speech after a translation, a video after an
answer. Such a step is a *leaf* (no task uses its output) that produces only media (audio, an image,
a video); when the request never speaks of that kind of thing (no word for it), nobody
asked for it, and running it costs minutes of compute for an output the answer then has to explain.

Small planners also put a text-generation step between two tasks ("describe the detected objects")
or next to the task that was asked for, when the request never asks for a text to be written. Such a
step only rewords a result: the final answer does that anyway. It is taken out, and the tasks that
read it read what it read (its input is a text, and so was its output, so they get the same kind).

Small planners also write one step twice: "compare the summary with the sentence", then "answer how
similar they are", as two identical sentence-similarity steps. A step that repeats an earlier one
(the same task on the same arguments) is taken out when its task analyses rather than makes (it
returns data: a classifier, a detector, a similarity), since it would only compute the same result
again; its readers read the earlier step. Two identical text-to-image steps stay (two pictures).

Only plans with more than one task lose a step (a plan that is a single step stays: it is the
planner's whole reading of the request), each with a recorded reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from hugginggpt.agent.plan import _MEDIA_KINDS, PlanTask, TaskInfo, media_read, replace_refs, whole_ref
from hugginggpt.agent.request_words import RequestWords

#: Words by which a request speaks of a media kind. File names do not count: a request about the
#: recording 'talk.wav' does not ask for speech to be made.
_MENTIONS = {
    "audio": re.compile(
        r"\b(audio\w*|aloud|speech\w*|speak\w*|spoken|voice\w*|listen\w*|hear\w*|narrat\w*|sound\w*|"
        r"pronounc\w*|podcast\w*|loud|say|music\w*|song\w*|melod\w*|tts)\b", re.IGNORECASE),
    "image": re.compile(
        r"\b(image\w*|picture\w*|photo\w*|pic|pics|draw\w*|paint\w*|illustrat\w*|visual\w*|sketch\w*|"
        r"art|artwork|depict\w*|design\w*|poster\w*|graphic\w*|render\w*|logo\w*|icon\w*|portrait\w*|scene\w*|snapshot\w*)\b",
        re.IGNORECASE),
    "video": re.compile(r"\b(video\w*|clip\w*|animat\w*|movie\w*|film\w*|footage)\b", re.IGNORECASE),
}


def mentioned_kinds(words: RequestWords) -> set[str]:
    """The media kinds a request speaks of, in its own words (not in the texts it quotes)."""
    return {kind for kind, mentions in _MENTIONS.items() if mentions.search(words.own)}


def drop_unrequested_leaves(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                            note: Callable[[int, str], None]) -> list[PlanTask]:
    """``items`` without the leaves whose only outputs are media of kinds the request never mentions.

    ``note(task_id, reason)`` records each drop. Repeats until no such leaf is left (dropping a leaf
    can make its producer a leaf), and never empties a plan of more than one task below one task.
    """
    wanted = mentioned_kinds(words)
    items = list(items)
    while len(items) > 1:
        used = {ref for t in items for ref in t.references()}
        for t in reversed(items):
            outputs = set(known[t.task].outputs) - {"data"}
            if t.id in used or not outputs or not outputs <= set(_MEDIA_KINDS) or outputs & wanted:
                continue
            note(t.id, f"dropped: {t.task} makes {'/'.join(sorted(outputs))}, which the request never asks for "
                       "or mentions, and no other task uses it")
            items.remove(t)
            break
        else:
            break
    return items


def drop_repeated_steps(items: list[PlanTask], known: dict[str, TaskInfo],
                        note: Callable[[int, str], None]) -> list[PlanTask]:
    """``items`` without the steps that repeat an earlier step exactly, for tasks that return data
    (analyses, whose result the same input always gives); the tasks that read a repeat read the first."""
    first_of: dict[tuple[str, str], PlanTask] = {}
    kept: list[PlanTask] = []
    for step in items:
        key = (step.task, json.dumps(step.args, sort_keys=True, ensure_ascii=False, default=str))
        first = first_of.get(key)
        if first is None or "data" not in known[step.task].outputs:
            first_of.setdefault(key, step)
            kept.append(step)
            continue
        readers = [t for t in items if t is not step and step.id in t.references()]
        for reader in readers:
            reader.args = replace_refs(reader.args, {step.id: first.id})
        note(step.id, f"taken out: repeats task {first.id} ({step.task}) on the same arguments"
                      + (f"; the tasks that read it read task {first.id}" if readers else ""))
    return kept


#: Words by which a request asks for a text to be written: what text-generation is for.
_ASKS_FOR_WRITING = re.compile(
    r"\b(writ\w*|compos\w*|draft\w*|paraphras\w*|rephras\w*|reword\w*|stor(?:y|ies)|poem\w*|essay\w*|"
    r"paragraph\w*|descriptive|elaborat\w*|brainstorm\w*|incomplete|text[ -]generation)\b"
    r"|\b(?:generat|creat|produc|mak|expand|continu|complet)\w* (?:\w+ ){0,3}?"
    r"(?:text|description|explanation|response|content|sentence|article|ideas?|rest)\b",
    re.IGNORECASE)

#: The task that writes free text, the one small planners insert out of habit.
WRITING_TASK = "text-generation"


def asks_for_writing(words: RequestWords) -> bool:
    """Whether a request asks, in its own words, for a text to be written (a story, a description...)."""
    return _ASKS_FOR_WRITING.search(words.own) is not None


def splice_unrequested_writing(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                               note: Callable[[int, str], None]) -> list[PlanTask]:
    """``items`` without the text-generation steps of a request that asks for no writing.

    A step that nobody reads is dropped; a step that others read is dropped only when its text is one
    whole ``<resource>-N`` and every argument that reads it takes a text, and its readers then read
    task N. A step that makes up its own text for others to read stays (taking it out would lose that
    text), and so does one read as audio or an image (the planner misnamed a media-making task).
    Never leaves fewer than one task.
    """
    if asks_for_writing(words):
        return items
    items = list(items)
    for step in [t for t in items if t.task == WRITING_TASK]:
        if len(items) <= 1:
            break
        readers = [t for t in items if t is not step and step.id in t.references()]
        source = whole_ref(step.args.get("text"))
        if readers and (source is None or any(media_read(r, step.id, known) for r in readers)):
            continue
        for reader in readers:
            reader.args = replace_refs(reader.args, {step.id: source})
        note(step.id, f"taken out: {WRITING_TASK} rewrites a text the request never asks to be written"
                      + (f"; the tasks that read it read task {source}" if readers else "; no task uses its output"))
        items.remove(step)
    return items


#: Words by which a request asks what something is: what image-classification is for.
_ASKS_FOR_CLASS = re.compile(
    r"\b(?:classif\w*|categor\w*|identif\w*|recogni[sz]\w*|label\w*|kind|type|species|breed|content\w*|"
    r"contain\w*|whether|what(?:'s| is)? (?:in|on|shown|this|that|it)|know what)\b", re.IGNORECASE)
CLASSIFIER_TASK = "image-classification"


def splice_unasked_classifiers(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                               note: Callable[[int, str], None]) -> list[PlanTask]:
    """``items`` without the image-classification steps whose label later tasks take as an image (an
    edit of "the classified image"), for a request that never asks what an image shows: those tasks
    read the image it classified instead. A classifier read as text, or by nobody, stays (a parallel
    classification is a common request in its own right)."""
    if _ASKS_FOR_CLASS.search(words.own):
        return items
    items = list(items)
    for step in [t for t in items if t.task == CLASSIFIER_TASK]:
        image = step.args.get("image")
        readers = [t for t in items if t is not step and step.id in t.references()]
        if not readers and len(items) > 1:
            note(step.id, f"dropped: {CLASSIFIER_TASK} for a request that never asks what an image shows, and no "
                          "task uses its label")
            items.remove(step)
            continue
        if not readers or not isinstance(image, str) or any(media_read(r, step.id, known) != "image" for r in readers):
            continue
        for reader in readers:
            reader.args = {name: image if whole_ref(value) == step.id else value for name, value in reader.args.items()}
        note(step.id, f"taken out: {CLASSIFIER_TASK} for a request that never asks what an image shows; the tasks "
                      f"that took its label as an image read {image!r}")
        items.remove(step)
    return items
