"""A step reading a file the user gives, beside an earlier step that made a new picture (or sound, or video) of
that file which nothing reads: asked alone which of the two the step works on.

"Enhance example.jpg, then classify the enhanced image" is often written with the classification reading
``example.jpg`` itself: the enhanced picture is made and read by nothing, and the chain the user asked for is two
unrelated steps. "Estimate the depth of shelf.jpg and give me its embedding" is written the same way and is right.
The words that tell them apart are the request's, in any language; the model reads them: asked about the step
alone (the request, the step's own words, and two lettered answers: the file as the user gave it, or the result of
the earlier step, in its own words), in both orders, the step reads the earlier result only when both orders pick
it (``reads_result``). Only a maker whose result is a new version of that medium counts (an enhancement, an edit,
a cleaned sound: it makes no text, so a detection's boxed picture is not one, and it makes no condition map, so a
depth map or canny edges are not: "how deep is everything in that picture? also segment it" segments the picture),
only one per file and reader (``tools.table.media_makers``), and only when its result is read by no task.
``check_chains`` asks about each such step of an answer (``{"tasks": [...]}``, as the planner wrote it) and rewires
the ones the model says read the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hugginggpt.agent.plan.choices import Scorer, answer_tasks, chosen_in_each, lettered, with_tasks
from hugginggpt.agent.plan.model import Repair, media_files, refs_in
from hugginggpt.tools.resources.mentions import same_file
from hugginggpt.tools.table import TaskSpec, media_makers


@dataclass(frozen=True)
class ChainCase:
    """A step (``reader``, its position in the answer) reading the given ``file`` in its argument ``arg``, and the
    earlier step (``maker``) that made a new result of the same medium from that file, read by nothing."""

    maker: Mapping[str, Any]
    reader: Mapping[str, Any]
    position: int
    arg: str
    file: str


def chain_cases(tasks: Sequence[Any], known: Mapping[str, TaskSpec]) -> list[ChainCase]:
    """The steps of ``tasks`` (an answer's tasks, or a plan's dumped) reading a given file beside exactly one
    earlier step that made a new result of the same medium from that file, a result no task reads (its maker makes
    no text and no condition map)."""
    steps = [t for t in tasks if isinstance(t, Mapping) and isinstance(t.get("task"), str)]
    read = {ref for t in steps for ref in refs_in(t.get("args") or {})}
    new_versions = media_makers(known)
    cases = []
    for position, reader in enumerate(steps):
        spec = known.get(reader["task"])
        if spec is None:
            continue
        for name, kind, value in media_files(reader.get("args"), spec):
            makers = []
            for maker in steps[:position]:
                made = known.get(maker["task"])
                if (made is None or maker["task"] not in new_versions or kind not in made.outputs
                        or not isinstance(maker.get("id"), int) or maker["id"] in read):
                    continue
                if any(same_file(value, given) for _, _, given in media_files(maker.get("args"), made)):
                    makers.append(maker)
            if len(makers) == 1:
                cases.append(ChainCase(makers[0], reader, position, name, value))
    return cases


def _words(task: Mapping[str, Any]) -> str:
    return str(task.get("step") or "").strip() or str(task.get("task"))


def input_messages(request: str, case: ChainCase, options: Sequence[str]) -> list[tuple[str, str]]:
    """The question which of the lettered ``options`` the step of ``case`` works on."""
    return lettered("planning_input", options, request=request, step=_words(case.reader))


def reads_result(scorer: Scorer, request: str, case: ChainCase) -> bool:
    """Whether the model, asked alone, says the step of ``case`` works on the earlier step's result rather than
    on the file as the user gave it: both orders of the two answers pick the result."""
    given = f"{case.file}, as the user gave it"
    result = f'the result of the earlier step "{_words(case.maker)}"'
    return chosen_in_each(scorer, lambda options: input_messages(request, case, options),
                          ((given, result), (result, given)), result)


async def check_chains(scorer: Scorer, request: str, data: Any,
                       known: Mapping[str, TaskSpec]) -> tuple[Any, list[Repair], int]:
    """``data`` (an answer) with each step of ``chain_cases`` that the model says works on the earlier step's
    result reading that result (``<resource>-N``) in place of the file; the repairs saying so, and how many steps
    were asked about. The cases are those of the answer as written: each step beside the same unread result is
    asked ("clean a.wav, then transcribe it and tell me the speaker's mood": both read the cleaned sound)."""
    tasks = answer_tasks(data)
    if tasks is None:
        return data, [], 0
    tasks = [dict(t) if isinstance(t, Mapping) else t for t in tasks]
    repairs: list[Repair] = []
    cases = chain_cases(tasks, known)
    for case in cases:
        if not await asyncio.to_thread(reads_result, scorer, request, case):
            continue
        reader = tasks[case.position]
        reader["args"] = {**reader["args"], case.arg: f"<resource>-{case.maker['id']}"}
        repairs.append({"task_id": reader.get("id"), "pass": "choice", "reason": (
            f"{case.arg} read {case.file}, beside task {case.maker['id']} ({case.maker['task']}) that made a new one "
            f"from it which nothing read; asked about this step alone, in both orders, the planner says it works "
            f"on that result")})
    return with_tasks(data, tasks, repairs), repairs, len(cases)
