"""A vote among several plans drawn for one request (``HUGGINGGPT_PLAN_DRAWS``): the plan most draws agree
on, drawn with the next seeds at the controller's own temperature, stopping once the vote is settled; for every
request or only where the controller chose a task name narrowly (``HUGGINGGPT_PLAN_VOTE``)."""

import json

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.model import Plan, PlanTask
from hugginggpt.agent.plan.vote import plan_shape, settled, winner
from hugginggpt.errors import ConfigError
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with
from .test_plan_choices import call_at, favouring

KNOWN = task_table()
REQUEST = "caption photo.jpg and read the caption aloud"
CAPTION = {"step": "caption photo.jpg", "task": "image-to-text", "id": 0, "args": {"image": "photo.jpg"}}
SPOKEN = {"step": "read it aloud", "task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}
QUESTION = {"step": "what is in it", "task": "visual-question-answering", "id": 0,
            "args": {"image": "photo.jpg", "question": "what is in the picture?"}}
ALONE = json.dumps({"wants": ["text"], "tasks": [CAPTION]})
BOTH = json.dumps({"wants": ["text", "audio"], "tasks": [CAPTION, SPOKEN]})
OTHER = json.dumps({"wants": ["text"], "tasks": [QUESTION]})


def _plan(*steps: tuple[str, list[int]]) -> Plan:
    return Plan(tasks=[PlanTask(task=name, id=i, dep=deps, args={"x": [f"<resource>-{d}" for d in deps]})
                       for i, (name, deps) in enumerate(steps)])


def test_plans_agree_on_names_and_edges_not_on_ids_or_words():
    one = _plan(("image-to-text", []), ("text-to-speech", [0]))
    same = Plan(tasks=[PlanTask(task="image-to-text", id=5, args={"image": "b.jpg"}, step="other words"),
                       PlanTask(task="text-to-speech", id=9, dep=[5], args={"text": "<resource>-5"})])
    apart = _plan(("image-to-text", []), ("text-to-speech", []))
    assert plan_shape(one) == plan_shape(same)
    assert plan_shape(one) != plan_shape(apart)  # the same names, joined otherwise


def test_the_vote_needs_a_majority_and_keeps_the_first_draw_otherwise():
    a, b, c = _plan(("image-to-text", [])), _plan(("object-detection", [])), _plan(("image-classification", []))
    assert winner([a, b, b]) == 1
    assert winner([a, b, c]) == 0  # no two agree
    assert winner([a, b]) == 0  # a tie
    assert winner([a, a, b]) == 0
    assert winner([a, b, c, c, b]) == 0  # two shapes with two votes each: a tie again
    with pytest.raises(ValueError):
        winner([])


def test_the_vote_is_settled_when_the_draws_left_cannot_change_it():
    a, b = _plan(("image-to-text", [])), _plan(("object-detection", []))
    assert not settled([a], 2)
    assert settled([a, a], 1)
    assert not settled([a, b], 1)
    assert settled([a, b], 0)
    assert not settled([], 1) and settled([], 0)


async def test_two_later_draws_that_agree_outvote_the_first(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    llm = SamplingChatModel(responses=[AIMessage(ALONE)], by_draw={(0.2, 1): [BOTH], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert llm.draws == [(0.2, 0), (0.2, 1), (0.2, 2)]  # each draw at the controller's own temperature
    assert result.usage["llm_calls"] == 3 and result.usage["plan_votes"] == 3
    assert result.repairs[0]["reason"] == "2 of 3 usable draws agree on this plan; the first draw's differs"
    assert len(result.raw_outputs) == 3


async def test_a_second_draw_that_agrees_settles_the_vote(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    llm = SamplingChatModel(responses=[AIMessage(BOTH)], by_draw={(0.2, 1): [BOTH], (0.2, 2): [OTHER]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert llm.draws == [(0.2, 0), (0.2, 1)] and result.usage["llm_calls"] == 2
    assert not any("draws agree" in r["reason"] for r in result.repairs)


async def test_draws_that_all_differ_keep_the_first(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    llm = SamplingChatModel(responses=[AIMessage(ALONE)], by_draw={(0.2, 1): [BOTH], (0.2, 2): [OTHER]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]
    assert len(llm.draws) == 3 and result.usage["plan_votes"] == 3


async def test_a_draw_that_cannot_be_used_casts_no_vote(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    unread = json.dumps({"wants": ["text"], "tasks": [SPOKEN | {"id": 0, "args": {"text": "hello"}}]})
    llm = SamplingChatModel(responses=[AIMessage(ALONE)], by_draw={(0.2, 1): [unread], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    # the second draw leaves photo.jpg unread: one usable draw against the first, a tie, so the first stays
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]
    assert len(llm.draws) == 3 and result.usage["plan_votes"] == 2


async def test_one_draw_unless_asked_and_none_from_a_greedy_controller(monkeypatch):
    llm = SamplingChatModel(responses=[AIMessage(ALONE)], by_draw={(0.2, 1): [BOTH], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    assert llm.draws == [(0.2, 0)] and "plan_votes" not in result.usage
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    greedy = SamplingChatModel(temperature=0.0, responses=[AIMessage(ALONE)], by_draw={(0.0, 1): [BOTH]})
    result = await plan_with(greedy, KNOWN, REQUEST, files=["photo.jpg"])
    assert greedy.draws == [(0.0, 0)] and [t.task for t in result.plan.tasks] == ["image-to-text"]


async def test_a_draw_count_that_is_no_whole_number_is_refused(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "three")
    llm = SamplingChatModel(responses=[AIMessage(ALONE)])
    with pytest.raises(ConfigError, match="HUGGINGGPT_PLAN_DRAWS='three'"):
        await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])


async def test_a_re_asked_plan_is_the_first_vote(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    unread = json.dumps({"wants": ["text"], "tasks": [SPOKEN | {"id": 0, "args": {"text": "hello"}}]})
    llm = SamplingChatModel(responses=[AIMessage(unread)], by_draw={(0.8, 1): [ALONE], (0.2, 1): [BOTH], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    # the first answer leaves photo.jpg unread: drawn afresh (0.8, seed 1), then two draws of the vote outvote it
    assert llm.draws == [(0.2, 0), (0.8, 1), (0.2, 1), (0.2, 2)]
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]


async def test_a_kept_plan_that_cannot_run_casts_no_vote(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    twice = json.dumps({"wants": ["text"], "tasks": [CAPTION, CAPTION | {"id": 1}]})
    llm = SamplingChatModel(responses=[AIMessage(twice)],
                            by_draw={(0.8, 1): [twice], (0.2, 1): [twice], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    # a step written twice, kept after the re-ask wrote it twice too: the one usable draw of the vote is kept
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert result.usage["plan_votes"] == 1
    assert result.repairs[0]["reason"] == ("1 of 1 usable draws agree on this plan; the plan kept before cannot "
                                           "run as it is")


class _Unsure(SamplingChatModel):
    """A sampling controller that lists close calls with its scripted answers and scores replies for ``favour``."""

    favour: str | None = None

    def answer_scores(self, messages, answers):
        return favouring(self.favour)(messages, answers)


SPORT = "Goal! Is this about sport or news?"
ZERO = json.dumps({"wants": ["text"], "tasks": [
    {"step": "sport or news", "task": "zero-shot-classification", "id": 0,
     "args": {"text": "Goal!", "candidate_labels": ["sport", "news"]}}]})
PLAIN = json.dumps({"wants": ["text"], "tasks": [
    {"step": "sport or news", "task": "text-classification", "id": 0, "args": {"text": "Goal!"}}]})


@pytest.mark.parametrize("unsure", [True, False])
async def test_unsure_takes_only_a_narrow_task_name_choice_to_a_vote(monkeypatch, unsure):
    monkeypatch.setenv("HUGGINGGPT_PLAN_VOTE", "unsure")
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    call = {"at": ZERO.index("zero-shot"), "drawn": "zero", "other": "text-class", "gap": 0.2}
    close = {"close_calls": [call]} if unsure else {}
    llm = _Unsure(responses=[AIMessage(ZERO, response_metadata=close)], favour="zero-shot-classification",
                  by_draw={(0.2, 1): [PLAIN], (0.2, 2): [PLAIN]})
    result = await plan_with(llm, KNOWN, SPORT)
    if not unsure:  # a confident answer is kept without more draws
        assert llm.draws == [(0.2, 0)] and "plan_votes" not in result.usage
        assert [t.task for t in result.plan.tasks] == ["zero-shot-classification"]
        return
    # asked alone, the model kept zero-shot-classification; two more draws both say text-classification and outvote it
    assert result.usage["choice_checks"] == 1 and result.usage["plan_votes"] == 3
    assert llm.draws == [(0.2, 0), (0.2, 1), (0.2, 2)]
    assert [t.task for t in result.plan.tasks] == ["text-classification"]


async def test_a_vote_trigger_that_is_no_known_word_is_refused(monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PLAN_DRAWS", "3")
    monkeypatch.setenv("HUGGINGGPT_PLAN_VOTE", "sometimes")
    llm = SamplingChatModel(responses=[AIMessage(ALONE)])
    with pytest.raises(ConfigError, match="HUGGINGGPT_PLAN_VOTE='sometimes' is not one of always, unsure"):
        await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    monkeypatch.setenv("HUGGINGGPT_PLAN_VOTE", " Always ")  # the default, as any letter case writes it
    llm = SamplingChatModel(responses=[AIMessage(ALONE)], by_draw={(0.2, 1): [BOTH], (0.2, 2): [BOTH]})
    result = await plan_with(llm, KNOWN, REQUEST, files=["photo.jpg"])
    assert result.usage["plan_votes"] == 3
