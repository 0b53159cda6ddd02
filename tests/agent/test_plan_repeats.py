"""A step written again as the same task making something from words alone, asked alone what it gives the user (every
rotation of the options, the scores summed); renamed when the pick makes a medium."""

import json
import re

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.repeats import check_repeats, givers, picked_gift, repeat_cases
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with

KNOWN = task_table()
STORM = "erzeuge einen Clip von einem Gewitter über dem Meer und füge das Donnergrollen hinzu"
CLIP = {"step": "erzeuge einen Clip von einem Gewitter über dem Meer", "task": "text-to-video", "id": 0,
        "args": {"text": "ein Gewitter über dem Meer"}}
THUNDER = {"step": "füge das Donnergrollen hinzu", "task": "text-to-video", "id": 1,
           "args": {"text": "das Donnergrollen"}}


def saying(gift: str | None, log: list | None = None):
    """A scorer that puts the option ``gift`` first (None: always the first letter, a position bias)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        lines = dict(re.findall(r"^([A-J])\) (.+)$", human, flags=re.M))
        return [1.0 if (gift is None and letter == "A") or lines.get(letter) == gift else 0.0 for letter in letters]

    return scores


def test_the_options_are_the_table_s_tasks_that_say_what_they_give_from_words():
    assert givers(KNOWN) == ["text-generation", "text-to-speech", "text-to-audio", "text-to-image", "text-to-video"]
    assert all(KNOWN[name].gives for name in givers(KNOWN))
    assert givers({n: KNOWN[n] for n in ("text-to-video", "image-to-text")}) == ["text-to-video"]


@pytest.mark.parametrize("tasks, cases", [
    ([CLIP, THUNDER], [1]),
    # one clip, or a clip then a voice: nothing written again
    ([CLIP], []),
    ([CLIP, {**THUNDER, "task": "text-to-speech"}], []),
    # a text written twice makes no medium; a step without words is not asked
    ([{**CLIP, "task": "text-generation"}, {**THUNDER, "task": "text-generation"}], []),
    ([CLIP, {**THUNDER, "step": " "}], []),
    # three logos: the second and the third are asked
    ([{**CLIP, "task": "text-to-image", "id": n} for n in range(3)], [1, 2]),
])
def test_a_case_is_a_step_written_again_as_a_task_making_a_medium_from_words(tasks, cases):
    assert repeat_cases(tasks, KNOWN) == cases


def test_the_pick_sums_the_scores_of_every_rotation():
    asked: list[str] = []
    assert picked_gift(saying(KNOWN["text-to-audio"].gives, asked), STORM, THUNDER["step"], KNOWN) == "text-to-audio"
    assert len(asked) == len(givers(KNOWN)) and all(THUNDER["step"] in q and STORM in q for q in asked)
    where = [q.index(KNOWN["text-to-audio"].gives) for q in asked]
    assert len(set(where)) == len(where)  # asked once in each position
    # a position bias puts each option first once: a tie, the table's first option (a text: no rename)
    assert picked_gift(saying(None), STORM, THUNDER["step"], KNOWN) == "text-generation"


async def test_the_step_becomes_the_task_making_what_it_gives_and_keeps_its_text():
    answer = {"wants": ["video"], "tasks": [CLIP, THUNDER]}
    data, repairs, asked = await check_repeats(saying(KNOWN["text-to-audio"].gives), STORM, answer, KNOWN)
    assert data["tasks"] == [CLIP, {**THUNDER, "task": "text-to-audio"}] and answer["tasks"] == [CLIP, THUNDER]
    assert asked == 1 and repairs[0]["task_id"] == 1 and "music or a sound" in repairs[0]["reason"]
    # the same task, or a text, picked: the step stays as written
    for gift in (KNOWN["text-to-video"].gives, KNOWN["text-generation"].gives):
        data, repairs, asked = await check_repeats(saying(gift), STORM, answer, KNOWN)
        assert data is answer and not repairs and asked == 1


class _Scoring(SamplingChatModel):
    def answer_scores(self, messages, answers):
        if "What does that step give the user?" in messages[-1][1]:
            return saying(KNOWN["text-to-audio"].gives)(messages, answers)
        return [0.0 for _ in answers]  # another question: a tie keeps the answer


async def test_the_planner_asks_about_a_generation_written_again():
    llm = _Scoring(responses=[AIMessage(json.dumps({"wants": ["video"], "tasks": [CLIP, THUNDER]}))])
    result = await plan_with(llm, KNOWN, STORM)
    assert [(t.task, t.args) for t in result.plan.tasks] == [
        ("text-to-video", {"text": "ein Gewitter über dem Meer"}), ("text-to-audio", {"text": "das Donnergrollen"})]
    assert result.usage["repeat_checks"] == 1
