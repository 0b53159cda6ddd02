"""Fuzzing stage 2: whatever the LLM answers to model selection, every task gets a model from its own
candidate list, with a reason; a hallucinated or malformed answer never reaches an executor.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan import Plan, PlanTask
from hugginggpt.llm.json_text import find_json
from hugginggpt.agent.selection import ModelSelector, _pick
from hugginggpt.tools.catalog import ModelCard
from tests.reliability.strategies import (
    FAST,
    INJECTIONS,
    KNOWN,
    SLOW,
    json_values,
    llm_texts,
)

Card = ModelCard  # the catalog's own card type


CARDS = {
    "summarization": [Card("acme/bart", "summarization", 900), Card("acme/t5", "summarization", 50),
                      Card("acme/pegasus", "summarization", 10)],
    "image-classification": [Card("acme/vit", "image-classification", 7), Card("acme/resnet", "image-classification", 70)],
    "text-to-speech": [Card("acme/only-voice", "text-to-speech", 1)],
}


class Catalog:
    def candidates(self, task: str, k: int = 5) -> list[Card]:
        return CARDS.get(task, [])[:k]


PLAN = Plan(tasks=[
    PlanTask(task="summarization", id=0, args={"text": "a long text"}),
    PlanTask(task="image-classification", id=1, args={"image": "cat.png"}),
    PlanTask(task="text-to-speech", id=2, dep=[0], args={"text": "<resource>-0"}),
])

candidate_ids = st.sampled_from([c.id for cards in CARDS.values() for c in cards])
entries = (candidate_ids | st.text(max_size=20) | st.sampled_from(INJECTIONS)
           | st.fixed_dictionaries({"id": candidate_ids | json_values(2)},
                                   optional={"reason": json_values(2)})
           | json_values(3))
answers = (st.dictionaries(st.sampled_from(["0", "1", "2", "3", "-1", "00"]) | st.text(max_size=3), entries,
                           max_size=4)
           | json_values())


def check_pick(answer) -> None:
    for task_id, cards in ((0, CARDS["summarization"]), (1, CARDS["image-classification"])):
        chosen = _pick(answer, task_id, cards)
        assert chosen["model"] in {c.id for c in cards}
        assert isinstance(chosen["reason"], str) and chosen["reason"]


def check_answer_text(text: str) -> None:
    try:
        answer = find_json(text, lambda value: isinstance(value, dict))
    except ValueError:
        answer = {"error": "no JSON"}
    check_pick(answer)


@pytest.mark.timeout(120)
@FAST
@given(answers)
def test_fuzz_pick(answer) -> None:
    check_pick(answer)


@pytest.mark.timeout(120)
@FAST
@given(llm_texts(answers) | st.text(max_size=100))
def test_fuzz_selection_answer_text(text: str) -> None:
    check_answer_text(text)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(answers)
def test_fuzz_pick_10k(answer) -> None:
    check_pick(answer)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(llm_texts(answers) | st.text(max_size=100))
def test_fuzz_selection_answer_text_10k(text: str) -> None:
    check_answer_text(text)


@pytest.mark.timeout(300)
@settings(FAST, max_examples=60)
@given(text=llm_texts(answers) | st.text(max_size=100))
def test_fuzz_selection_stage_with_a_scripted_llm(text: str) -> None:
    llm = FakeMessagesListChatModel(responses=[AIMessage(text)])
    selector = ModelSelector(llm, Catalog(), structured=False)
    selections = asyncio.run(selector.select("summarize and classify", PLAN, KNOWN, {}))
    assert set(selections) == {0, 1, 2}
    for task_id, step in PLAN.by_id.items():
        assert selections[task_id]["model"] in {c.id for c in CARDS[step.task]}
    assert selections[2] == {"model": "acme/only-voice", "reason": "the only candidate for this task"}


def test_an_llm_that_fails_falls_back_to_the_most_downloaded() -> None:
    class Broken(FakeMessagesListChatModel):
        def _generate(self, *args, **kwargs):
            raise TimeoutError("the controller took too long")

    selector = ModelSelector(Broken(responses=[]), Catalog(), structured=False)
    selections = asyncio.run(selector.select("x", PLAN, KNOWN, {}))
    assert selections[0]["model"] == "acme/bart" and selections[1]["model"] == "acme/resnet"
    assert "no choice" in selections[0]["reason"]
