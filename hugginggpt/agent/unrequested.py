"""Steps nobody asked for: a plan's end product of a kind the request never mentions is dropped.

Small planners append a step out of habit: a text-to-speech after a translation, a video after an
answer. Such a step is a *leaf* (no task uses its output) that produces only media (audio, an image,
a video); when the request never speaks of that kind of thing (no word for it), nobody
asked for it, and running it costs minutes of compute for an output the answer then has to explain.

Only leaves of plans with more than one task are dropped (a plan that is a single step stays: it is
the planner's whole reading of the request), each with a recorded reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hugginggpt.agent.plan import _MEDIA_KINDS, PlanTask, TaskInfo

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


def mentioned_kinds(request: str) -> set[str]:
    """The media kinds ``request`` speaks of."""
    return {kind for kind, words in _MENTIONS.items() if words.search(request or "")}


def drop_unrequested_leaves(items: list[PlanTask], known: dict[str, TaskInfo], request: str,
                            note: Callable[[int, str], None]) -> list[PlanTask]:
    """``items`` without the leaves whose only outputs are media of kinds ``request`` never mentions.

    ``note(task_id, reason)`` records each drop. Repeats until no such leaf is left (dropping a leaf
    can make its producer a leaf), and never empties a plan of more than one task below one task.
    """
    wanted = mentioned_kinds(request)
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

