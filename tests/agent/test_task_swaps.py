"""question-answering on a context nobody gave becomes visual-question-answering on the request's image."""

from __future__ import annotations

import pytest

from hugginggpt.agent.plan import task_info_from_spec
from hugginggpt.agent.plan_repair import validate_plan
from hugginggpt.tools import task_table


@pytest.fixture(scope="module")
def known():
    table = task_table()
    return {name: task_info_from_spec(table[name]) for name in table}


def qa(n, context, question="What colour is the car?"):
    return {"task": "question-answering", "id": n, "args": {"question": question, "context": context}}


@pytest.mark.parametrize("context", ["Bees pollinate most flowering plants and produce honey.", "example.jpg"])
def test_an_invented_context_or_the_image_itself_means_a_question_about_the_image(known, context):
    plan, repairs = validate_plan([qa(0, context)], known, "In 'example.jpg', what colour is the car?")
    assert plan.as_list() == [{"task": "visual-question-answering", "id": 0, "dep": [],
                               "args": {"image": "example.jpg", "question": "What colour is the car?"}}]
    assert "visual-question-answering" in repairs[0]["reason"]


def test_the_image_comes_from_the_nearest_earlier_image_task(known):
    raw = [{"task": "text-to-image", "id": 0, "args": {"text": "a red car"}}, qa(1, "A car is shown.")]
    plan, _ = validate_plan(raw, known, "Draw a red car, then tell me what colour the car is.")
    assert plan.as_list()[1] == {"task": "visual-question-answering", "id": 1, "dep": [0],
                                 "args": {"image": "<resource>-0", "question": "What colour is the car?"}}


@pytest.mark.parametrize("context,request_text", [
    ("The car is blue.", "Given 'The car is blue.' and the photo a.jpg, what colour is the car?"),  # given text
    ("the car is blue", "Here is my note: 'The car is blue and fast.' What colour is the car? See a.jpg"),  # loose copy
    ("<resource>-0", "Caption a.jpg, then answer: what colour is the car?"),  # an earlier output
    ("A car is shown.", "What colour is the car?"),  # no image to ask about
    ("A car is shown.", "Compare a.jpg and b.jpg: what colour is the car?"),  # which image?
])
def test_a_real_context_or_no_single_image_leaves_it_alone(known, context, request_text):
    raw = [{"task": "image-to-text", "id": 0, "args": {"image": "a.jpg"}}, qa(1, context)]
    if "<resource>" not in context:
        raw = [qa(0, context)]
    plan, _ = validate_plan(raw, known, request_text)
    assert plan.as_list()[-1]["task"] == "question-answering"


def test_nothing_changes_when_visual_question_answering_is_not_offered(known):
    offered = {k: v for k, v in known.items() if k != "visual-question-answering"}
    plan, _ = validate_plan([qa(0, "made up")], offered, "In 'example.jpg', what colour is the car?")
    assert plan.as_list()[0]["task"] == "question-answering"
