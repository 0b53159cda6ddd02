"""An edit of a photo the user gives, asked alone whether it draws a new picture along a condition map of the photo
(both orders) and along which map (every rotation of the drawings); renamed to that drawing, the passes add its map."""

import json

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.drawing_choice import (DRAW, check_drawings, drawings, edit_cases, edit_task,
                                                   picked_drawing)
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with

KNOWN = task_table()
POSE = "照着 dance.jpg 里人物的姿势，生成一张宇航员跳舞的图片"
EDIT = {"step": "生成一张宇航员跳舞的图片", "task": "image-text-to-image", "id": 0,
        "args": {"image": "dance.jpg", "prompt": "an astronaut dancing"}}


def test_the_edit_and_the_drawings_come_from_the_task_table():
    assert edit_task(KNOWN) == "image-text-to-image"
    assert set(drawings(KNOWN)) == {name for name, spec in KNOWN.items() if spec.map_by}
    assert all("keeps only" in KNOWN[name].contrast for name in drawings(KNOWN))
    offered = {n: KNOWN[n] for n in ("image-text-to-image", "openpose-text-to-image", "depth-text-to-image",
                                     "depth-estimation")}
    assert drawings(offered) == ["depth-text-to-image"]  # a drawing whose map maker is not offered is no option


@pytest.mark.parametrize("tasks, given, cases", [
    ([EDIT], ["dance.jpg"], [0]),
    # a picture the plan made, or a file the request does not give: not asked
    ([{"step": "a", "task": "text-to-image", "id": 0, "args": {"text": "a house"}},
      {**EDIT, "id": 1, "args": {"image": "<resource>-0", "prompt": "in winter"}}], [], []),
    ([EDIT], [], []),
    # the plan makes a condition map of the photo: the passes complete it
    ([{"step": "pose", "task": "openpose-control", "id": 1, "args": {"image": "dance.jpg"}}, {**EDIT, "id": 0}],
     ["dance.jpg"], []),
    # a step without words
    ([{**EDIT, "step": ""}], ["dance.jpg"], []),
])
def test_only_an_edit_of_a_given_photo_with_no_map_is_asked(tasks, given, cases):
    assert edit_cases(tasks, KNOWN, given) == cases


def scorer_for(first: str | None, drawing: str | None, log: list | None = None):
    """A scorer: the first question's ``first`` ("draw" or "edit"; None: the first letter, a position) and, in the
    second, ``drawing`` ahead (None: the last letter, a position)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        lines = [line[3:] for line in human.splitlines() if len(line) > 3 and line[1:3] == ") "]
        if len(letters) == 2:
            want = DRAW if first == "draw" else KNOWN["image-text-to-image"].contrast
            return [1.0 if (first is None and i == 0) or (first and text == want) else 0.0
                    for i, text in enumerate(lines)]
        wanted = KNOWN[drawing].contrast if drawing else None
        return [1.0 if text == wanted or (drawing is None and i == len(lines) - 1) else 0.0
                for i, text in enumerate(lines)]

    return scores


def test_a_drawing_is_picked_when_both_orders_say_draw_and_the_rotations_agree():
    asked: list[str] = []
    assert picked_drawing(scorer_for("draw", "openpose-text-to-image", asked), POSE, EDIT["step"], KNOWN) == \
        "openpose-text-to-image"
    assert len(asked) == 2 + len(drawings(KNOWN))  # both orders, then every rotation
    assert f"B) {DRAW}" in asked[0] and f"A) {DRAW}" in asked[1] and POSE in asked[0]
    assert picked_drawing(scorer_for("edit", "openpose-text-to-image"), POSE, EDIT["step"], KNOWN) is None
    assert picked_drawing(scorer_for(None, "openpose-text-to-image"), POSE, EDIT["step"], KNOWN) is None
    # a position in the second question cancels out over the rotations: a tie, the first drawing of the table
    assert picked_drawing(scorer_for("draw", None), POSE, EDIT["step"], KNOWN) == drawings(KNOWN)[0]


async def test_the_edit_becomes_the_drawing_reading_the_photo_with_the_edit_s_instruction():
    answer = {"wants": ["image"], "tasks": [EDIT]}
    data, repairs, asked = await check_drawings(scorer_for("draw", "openpose-text-to-image"), POSE, answer, KNOWN,
                                                ["dance.jpg"])
    assert data["tasks"][0] == {**EDIT, "task": "openpose-text-to-image",
                                "args": {"image": "dance.jpg", "text": "an astronaut dancing"}}
    assert asked == 1 and "openpose-text-to-image" in repairs[0]["reason"] and answer["tasks"] == [EDIT]
    data, repairs, asked = await check_drawings(scorer_for("edit", None), POSE, answer, KNOWN, ["dance.jpg"])
    assert data is answer and not repairs and asked == 1


class _Scoring(SamplingChatModel):
    def answer_scores(self, messages, answers):
        human = messages[-1][1]
        if DRAW in human or "keeps only" in human:
            return scorer_for("draw", "openpose-text-to-image")(messages, answers)
        return [0.0 for _ in answers]  # another question: a tie keeps the answer


async def test_the_planner_draws_along_the_pose_map_it_adds():
    llm = _Scoring(responses=[AIMessage(json.dumps({"wants": ["image"], "tasks": [EDIT]}))])
    result = await plan_with(llm, KNOWN, POSE)
    assert [(t.task, t.args) for t in result.plan.tasks] == [
        ("openpose-control", {"image": "dance.jpg"}),
        ("openpose-text-to-image", {"image": "<resource>-0", "text": "an astronaut dancing"})]
    assert result.usage["drawing_checks"] == 1
