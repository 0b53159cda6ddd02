"""An edit of a photo the user gives, asked alone whether it edits the photo or draws a new picture along a
condition map of it, and along which map.

"照着 dance.jpg 里人物的姿势，生成一张宇航员跳舞的图片" (draw an astronaut dancing in the pose of dance.jpg) is often
written as one edit of dance.jpg: the validation passes complete a drawing along a map (``map_by``: the pose drawing
reads openpose-control's map of the photo, added when it reads the photo itself), but not an edit that should have
been one. The request's words tell the two apart, in any language; the model reads them, asked about the step alone
in two questions: first the edit (its ``contrast``) against "a new picture that keeps only the pose, outlines,
lines, depth, surface or layout of a picture" (``DRAW``), lettered in both orders, a drawing only when both pick it;
then which drawing, each of the table's drawings along a map shown with its ``contrast`` (what it keeps), asked in
every rotation of the list (each drawing once in each position: with seven options a small model favours a
position, and two orders did not cancel it, docs/results/dev-ab "Session 44"), the drawing with the highest summed
log-probability picked. The step becomes that drawing reading the photo, its text the edit's instruction; the
passes then add the map.

Only an edit reading a file the user gives with this request counts, in a plan with no condition map of that file
(a plan with the map is completed by the passes), and only a step with words: an edit of a picture the plan made, or
of none, is not asked ("draw a cyberpunk city" written as an edit said "new picture" too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from hugginggpt.agent.plan.choices import LETTERS, Scorer, answer_tasks, chosen_in_each, lettered, with_tasks
from hugginggpt.agent.plan.model import Repair, media_files
from hugginggpt.tools.resources.mentions import same_file
from hugginggpt.tools.table import TaskSpec, map_makers

DRAW = ("Draw a new picture of what a text says that keeps only the pose, outlines, lines, depth, surface or layout "
        "of a picture: everything else is new.")
"""The first question's other answer: a drawing along some condition map of the picture."""


def edit_task(known: Mapping[str, TaskSpec]) -> str | None:
    """The edit among ``known``: the one task reading a picture and a required text, making only a picture, that
    draws along no map (image-text-to-image); None when there is not exactly one."""
    found = [name for name, spec in known.items() if not spec.map_by and spec.outputs == ["image"]
             and sorted(arg.value_kind for arg in spec.required_args) == ["image", "text"]]
    return found[0] if len(found) == 1 else None


def drawings(known: Mapping[str, TaskSpec]) -> list[str]:
    """The drawings along a condition map among ``known`` whose map maker is offered too and that say what they keep
    (``contrast``), in table order."""
    return [name for name, spec in known.items() if spec.map_by and spec.map_by in known and spec.contrast]


def edit_cases(tasks: Sequence[Any], known: Mapping[str, TaskSpec], given: Collection[str]) -> list[int]:
    """The positions of an answer's steps written as the edit (``edit_task``) of a file in ``given`` (the files
    the request gives), with words, in a plan making no condition map of that file."""
    edit = edit_task(known)
    if edit is None or not drawings(known):
        return []
    maps = map_makers(known)
    steps = [t for t in tasks if isinstance(t, Mapping)]
    mapped = [value for t in steps if t.get("task") in maps for value in (t.get("args") or {}).values()
              if isinstance(value, str)]
    found = []
    for position, task in enumerate(tasks):
        if not isinstance(task, Mapping) or task.get("task") != edit or not str(task.get("step") or "").strip():
            continue
        images = [value for _, kind, value in media_files(task.get("args"), known[edit]) if kind == "image"]
        if (len(images) == 1 and any(same_file(images[0], f) for f in given)
                and not any(same_file(images[0], m) for m in mapped)):
            found.append(position)
    return found


def picked_drawing(scorer: Scorer, request: str, step: str, known: Mapping[str, TaskSpec]) -> str | None:
    """The drawing the model says the edit step is (the two questions of the module's docstring), None when it
    says edit in either order of the first."""
    edit, options = edit_task(known), drawings(known)
    if edit is None or not options:
        return None
    def question(texts: Sequence[str]) -> list[tuple[str, str]]:
        return lettered("planning_choice", texts, request=request, step=step)

    first = [known[edit].contrast or known[edit].description, DRAW]
    if not chosen_in_each(scorer, question, (first, first[::-1]), DRAW):
        return None
    total = dict.fromkeys(options, 0.0)
    for shift in range(len(options)):
        order = options[shift:] + options[:shift]
        scores = scorer(question([known[n].contrast for n in order]), list(LETTERS[:len(order)]))
        for name, score in zip(order, scores):
            total[name] += score
    return max(options, key=total.__getitem__)


async def check_drawings(scorer: Scorer, request: str, data: Any, known: Mapping[str, TaskSpec],
                         given: Collection[str]) -> tuple[Any, list[Repair], int]:
    """``data`` (an answer) with each edit step of ``edit_cases`` that the model says draws a new picture along a
    map of the photo renamed to that drawing: it reads the photo (the passes add the map) and its text is the edit's
    instruction (else the step's words). The repairs saying so, and how many steps were asked about."""
    tasks = answer_tasks(data)
    if tasks is None:
        return data, [], 0
    cases = edit_cases(tasks, known, given)
    if not cases:
        return data, [], 0
    tasks = [dict(t) if isinstance(t, Mapping) else t for t in tasks]
    edit = str(edit_task(known))
    repairs: list[Repair] = []
    for position in cases:
        task = tasks[position]
        step = str(task["step"]).strip()
        drawing = await asyncio.to_thread(picked_drawing, scorer, request, step, known)
        if drawing is None:
            continue
        args = task.get("args") or {}
        image = next(value for _, kind, value in media_files(args, known[edit]) if kind == "image")
        said = next((v for k, v in args.items() if (a := known[edit].find_arg(k)) is not None and a.value_kind == "text"
                     and isinstance(v, str) and v.strip()), step)
        spec = known[drawing]
        task["task"] = drawing
        task["args"] = {arg.name: (image if arg.value_kind == "image" else said) for arg in spec.required_args}
        repairs.append({"task_id": task.get("id"), "pass": "choice", "reason": (
            f"{edit} of {image!r}; asked about this step alone, the planner says it draws a new picture along a map "
            f"of it (in both orders), {drawing} (in every order of the drawings)")})
    return with_tasks(data, tasks, repairs), repairs, len(cases)
