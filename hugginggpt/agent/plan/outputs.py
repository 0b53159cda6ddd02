"""What the user wants back from a request, as the planner states it before its tasks, and whether a plan
delivers it.

The planner's answer opens with ``"wants"``: the kinds of result the user asked for (``text``, ``image``,
``audio``, ``video``; none for a greeting). The model reads the request for it, in whatever language the
request is written: no word list is involved. Writing it before the tasks makes the model read the request
for its results first. A plan whose tasks make none of a wanted kind keeps its tasks and gets a note in its
repairs (``planner.py``): the model names a kind nobody asked for more often than its plan misses one. A
controller that scores replies is asked about such a media kind alone (``confirmed_want``: "does the user ask
to get a picture back?", yes and no in both orders); when both orders say yes, the planner draws the plan
afresh once (``planner.py``).

A plan of one task that hands the whole message to a model as it is ("hi there!" as a text generation's prompt)
may be a plan for a greeting: asked alone whether the message is small talk or a request for something made or
answered (``only_chat``: small talk in both orders, by a margin), the planner leaves such a plan empty, and the
response answers the user. A request that asks for a text ("write a poem about the sea", written as its own
prompt) is kept: the model says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hugginggpt.agent.plan.choices import LETTERS, Scorer, chosen_in_each, lettered
from hugginggpt.agent.plan.model import Plan, refs_in
from hugginggpt.agent.plan.references import makers_of
from hugginggpt.tools.schemas import WANTED_KINDS
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec


def stated_wants(data: Any) -> list[str] | None:
    """The kinds the answer's ``wants`` names (known kinds only, in order, once each); None when the answer
    states none."""
    if not isinstance(data, Mapping) or not isinstance(data.get("wants"), list):
        return None
    return [kind for kind in dict.fromkeys(str(k).strip().lower() for k in data["wants"]) if kind in WANTED_KINDS]


def makes(spec: TaskSpec, kind: str) -> bool:
    """Whether a task of ``spec`` gives the user a result of ``kind`` (a text is any text answer)."""
    return kind in spec.outputs if kind in MEDIA_KINDS else spec.produces("text")


def undelivered(plan: Plan, wants: Sequence[str], known: Mapping[str, TaskSpec]) -> list[str]:
    """The wanted kinds that no task of ``plan`` makes (tasks whose outputs are unknown make anything)."""
    specs = [known[t.task] for t in plan.tasks if t.task in known]
    if any(not spec.outputs for spec in specs):
        return []
    return [kind for kind in wants if not any(makes(spec, kind) for spec in specs)]


def wants_note(missing: Sequence[str], wants: Sequence[str], known: Mapping[str, TaskSpec]) -> str:
    """The note on a plan that makes none of a wanted kind: which kinds, and which tasks make them
    (``references.makers_of``: the same names a rejection for a missing input gives)."""
    parts = []
    for kind in missing:
        makers = makers_of(known, kind) if kind in MEDIA_KINDS else []
        parts.append(f"{kind} (tasks that make {kind}: {', '.join(makers)})" if makers else kind)
    return (f"the answer says the user wants {', '.join(wants)} back, but no task of the plan makes "
            + "; ".join(parts))


WHAT = {"image": "a picture", "audio": "a sound or spoken audio", "video": "a video"}
"""How the question about a wanted media kind names it."""


def wanted_messages(request: str, kind: str, options: Sequence[str]) -> list[tuple[str, str]]:
    """The question whether ``request`` asks to get a result of media ``kind`` back, with the lettered
    ``options`` ("yes", "no" in some order)."""
    return lettered("planning_wanted", options, request=request, what=WHAT[kind])


def confirmed_want(scorer: Scorer, request: str, kind: str) -> bool:
    """Whether the model, asked alone, says that ``request`` asks to get a result of media ``kind`` back: its
    reply scored with "yes" first and with "no" first (a small model favours a position), yes in both."""
    return chosen_in_each(scorer, lambda options: wanted_messages(request, kind, options),
                          (("yes", "no"), ("no", "yes")), "yes")


def delivered_kinds(steps: Sequence[Mapping[str, Any]], known: Mapping[str, TaskSpec]) -> list[str]:
    """The kinds a plan (``[{"task", "id", "args"}]``) gives back: each last task's (one that no other task
    reads) media output when it makes only media, else text; in plan order, once each."""
    read = {n for step in steps for n in refs_in(step.get("args") or {})}
    kinds: list[str] = []
    for step in steps:
        spec = known.get(str(step.get("task")))
        if step.get("id") in read or spec is None:
            continue
        media = [kind for kind in spec.outputs if kind in MEDIA_KINDS]
        kind = media[0] if media and not spec.produces("text") else "text"
        if kind not in kinds:
            kinds.append(kind)
    return kinds


def _letters(text: str) -> str:
    """``text``'s letters and digits, lower case (any script), without spaces or punctuation."""
    return re.sub(r"\W+", "", text.lower())


def echoes_message(plan: Plan, message: str, known: Mapping[str, TaskSpec]) -> bool:
    """Whether ``plan`` is one task whose text arguments are, together, the whole ``message`` (each a part of
    it, all of them at least four fifths of its letters): the user's words handed to a model as they are."""
    if len(plan.tasks) != 1 or plan.tasks[0].task not in known or not _letters(message):
        return False
    spec, task = known[plan.tasks[0].task], plan.tasks[0]
    texts = [_letters(value) for name, value in task.args.items() if isinstance(value, str)
             and (arg := spec.find_arg(name)) is not None and arg.value_kind == "text"]
    said = _letters(message)
    return bool(texts) and all(text in said for text in texts) and 5 * sum(map(len, texts)) >= 4 * len(said)


CHAT = ("small talk: a greeting, thanks, goodbye or a question about the assistant",
        "a request for something to be made or answered: a text written (a poem, a story, a joke, a reply), an "
        "answer, a picture, a sound or a video")
"""The two answers of the question whether a message is small talk (``only_chat``)."""
CHAT_MARGIN = 0.2
"""How far (in log-probability) small talk must lead in each order to count: a near-tie is no answer."""


def only_chat(scorer: Scorer, message: str) -> bool:
    """Whether the model, asked alone, says ``message`` is small talk (a greeting, thanks, goodbye, a question
    about the assistant) rather than a request for something made or answered: asked with small talk first and
    last, it leads by ``CHAT_MARGIN`` in both."""
    for options in (CHAT, CHAT[::-1]):
        scores = scorer(lettered("planning_chat", options, request=message), list(LETTERS[:2]))
        chat = options.index(CHAT[0])
        if scores[chat] - scores[1 - chat] < CHAT_MARGIN:
            return False
    return True
