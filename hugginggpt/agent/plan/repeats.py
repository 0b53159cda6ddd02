"""A step written again as the same task that makes something from words alone, asked alone what it gives the user.

"erzeuge einen Clip von einem Gewitter über dem Meer und füge das Donnergrollen hinzu" (make a clip of a storm and add
the rumble of thunder) was written as two text-to-video steps, "make me a picture of an owl reading under a lamp and a
short lullaby to go with it" as two drawings. A plan may well make the same thing twice (three logos drawn one after
the other), but a second step written as the same task making something from words is where a step of another kind
hides. Such a step is asked about alone: "what does that step give the user?", each task that makes something from
words shown by what it gives (``gives`` in the task table: a picture, a video, music or a sound, a voice speaking a
text aloud, a text), lettered in every rotation of the list (a small model favours a position; each option is asked
once in each), the option with the highest summed log-probability picked. Asking for a pick first in every rotation
moved no recorded dev step (docs/results/dev-ab "Session 45"). The step becomes the task picked when that task makes a
medium; a text picked leaves it as written (a text written from words alone is rarely what such a step is: a caption
reads a picture). The step keeps its arguments: each such task reads one text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from hugginggpt.agent.plan.choices import LETTERS, Scorer, answer_tasks, lettered, rename, with_tasks
from hugginggpt.agent.plan.model import Repair
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec


def givers(known: Mapping[str, TaskSpec]) -> list[str]:
    """The tasks of ``known`` that say what they give (``gives``) and read texts only, in table order."""
    return [name for name, spec in known.items()
            if spec.gives and spec.required_args and all(arg.value_kind == "text" for arg in spec.required_args)]


def repeat_cases(tasks: list[Any], known: Mapping[str, TaskSpec]) -> list[int]:
    """The positions of an answer's steps, with words, written as a task of ``givers`` making a medium that an
    earlier step of the answer is written as too."""
    options = givers(known)
    found = []
    for position, task in enumerate(tasks):
        name = task.get("task") if isinstance(task, Mapping) else None
        if (name in options and any(kind in MEDIA_KINDS for kind in known[name].outputs)
                and str(task.get("step") or "").strip()
                and any(isinstance(t, Mapping) and t.get("task") == name for t in tasks[:position])):
            found.append(position)
    return found


def picked_gift(scorer: Scorer, request: str, step: str, known: Mapping[str, TaskSpec]) -> str:
    """The task whose ``gives`` the model scores highest, asked what ``step`` gives the user, the log-probabilities
    summed over every rotation of ``givers`` (each option once in each position)."""
    options = givers(known)
    total = dict.fromkeys(options, 0.0)
    for shift in range(len(options)):
        order = options[shift:] + options[:shift]
        messages = lettered("planning_gives", [known[name].gives for name in order], request=request, step=step)
        for name, score in zip(order, scorer(messages, list(LETTERS[:len(order)]))):
            total[name] += score
    return max(options, key=total.__getitem__)


async def check_repeats(scorer: Scorer, request: str, data: Any,
                        known: Mapping[str, TaskSpec]) -> tuple[Any, list[Repair], int]:
    """``data`` (an answer) with each step of ``repeat_cases`` renamed to the task that makes a medium the model says
    it gives (``picked_gift``). The repairs saying so, and how many steps were asked about."""
    tasks = answer_tasks(data)
    if tasks is None:
        return data, [], 0
    cases = repeat_cases(tasks, known)
    if not cases:
        return data, [], 0
    tasks = [dict(t) if isinstance(t, Mapping) else t for t in tasks]
    repairs: list[Repair] = []
    for position in cases:
        task = tasks[position]
        written = str(task["task"])
        pick = await asyncio.to_thread(picked_gift, scorer, request, str(task["step"]).strip(), known)
        if pick == written or not any(kind in MEDIA_KINDS for kind in known[pick].outputs):
            continue
        rename(task, pick, known)
        repairs.append({"task_id": task.get("id"), "pass": "choice", "reason": (
            f"{written} again after an earlier step; asked what this step gives the user (in every order), the "
            f"planner says {known[pick].gives}: {pick}")})
    return with_tasks(data, tasks, repairs), repairs, len(cases)
