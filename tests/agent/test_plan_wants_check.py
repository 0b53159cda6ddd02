"""A picture, sound or video the answer says the user wants and no task makes: asked about alone (yes/no, in both
orders), and only when the model confirms it, the plan drawn afresh once."""

import json
import re

import pytest

from hugginggpt.agent.plan.outputs import confirmed_want
from hugginggpt.llm.sampling import REDRAW_TEMPERATURE
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with

KNOWN = task_table()
REQUEST = "write a short poem about the sea and read it aloud"
POEM = {"step": "write a poem", "task": "text-generation", "id": 0, "args": {"text": "a short poem about the sea"}}
SPOKEN = {"step": "read it aloud", "task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}
FIRST = json.dumps({"wants": ["text", "audio"], "tasks": [POEM]})
SECOND = json.dumps({"wants": ["text", "audio"], "tasks": [POEM, SPOKEN]})


def says(answer: str | None, log: list | None = None):
    """A scorer whose reply is the letter of ``answer`` ("yes" or "no"); None: always "A" (a position bias)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        lines = {word: letter for letter, word in re.findall(r"^([AB])\) (yes|no)$", human, flags=re.M)}
        pick = "A" if answer is None or not lines else lines[answer]  # another question (a twin's): a position
        return [0.0 if letter == pick else -2.0 for letter in letters]

    return scores


def test_a_want_is_confirmed_only_when_both_orders_say_yes():
    asked: list[str] = []
    assert confirmed_want(says("yes", asked), REQUEST, "audio")
    assert "A) yes\nB) no" in asked[0] and "A) no\nB) yes" in asked[1]
    assert REQUEST in asked[0] and "a sound or spoken audio" in asked[0]
    assert not confirmed_want(says("no"), REQUEST, "audio")
    assert not confirmed_want(says(None), REQUEST, "video")  # a position, not an answer


class _Scoring(SamplingChatModel):
    """A controller that draws afresh and scores replies: yes or no to the question, as ``answer`` says."""

    answer: str | None = "yes"
    scored: int = 0

    def answer_scores(self, messages, answers):
        if re.search(r"^[AB]\) (yes|no)$", messages[-1][1], flags=re.M):  # the wants question (not a twin's)
            self.scored += 1
        return says(self.answer)(messages, answers)


async def test_a_confirmed_want_draws_the_plan_afresh_and_keeps_the_plan_that_makes_it():
    llm = _Scoring(responses=[_ai(FIRST)], by_draw={(REDRAW_TEMPERATURE, 1): [SECOND]})
    result = await plan_with(llm, KNOWN, REQUEST)
    assert [t.task for t in result.plan.tasks] == ["text-generation", "text-to-speech"]
    assert llm.draws == [(0.2, 0), (REDRAW_TEMPERATURE, 1)] and llm.scored == 2
    assert result.usage["wants_checks"] == 1 and result.usage["llm_calls"] == 2
    assert "asked alone, the model confirms it (drawn afresh)" in result.repairs[0]["reason"]
    assert [m.content for m in llm.prompts[1]] == [m.content for m in llm.prompts[0]]  # the first prompt again


async def test_an_unconfirmed_want_keeps_the_first_plan_with_its_note():
    llm = _Scoring(responses=[_ai(FIRST)], answer="no")
    result = await plan_with(llm, KNOWN, REQUEST)
    assert [t.task for t in result.plan.tasks] == ["text-generation"]
    assert llm.draws == [(0.2, 0)] and llm.scored == 1 and result.usage["llm_calls"] == 1  # no in the first order: settled
    assert "no task of the plan makes audio" in result.repairs[-1]["reason"]


async def test_a_second_plan_that_still_makes_none_is_not_used():
    llm = _Scoring(responses=[_ai(FIRST)], by_draw={(REDRAW_TEMPERATURE, 1): [FIRST]})
    result = await plan_with(llm, KNOWN, REQUEST)
    assert [t.task for t in result.plan.tasks] == ["text-generation"]
    assert any("the second answer was not used (it makes no audio)" in r["reason"] for r in result.repairs)


@pytest.mark.parametrize("case", ["given", "off", "text"])
async def test_no_question_for_a_kind_the_request_gives_a_text_or_when_switched_off(monkeypatch, case):
    if case == "off":
        monkeypatch.setenv("HUGGINGGPT_WANTS_CHECK", "off")
    request, answer = REQUEST, FIRST
    if case == "given":  # the request gives a recording: "audio" in wants names its input, not a result
        request = "transcribe talk.wav and write a poem about it"
        answer = json.dumps({"wants": ["audio"], "tasks": [
            {"step": "transcribe", "task": "automatic-speech-recognition", "id": 0, "args": {"audio": "talk.wav"}}]})
    if case == "text":  # every wanted kind is made: nothing to ask
        answer = json.dumps({"wants": ["text"], "tasks": [POEM]})
    llm = _Scoring(responses=[_ai(answer)])
    result = await plan_with(llm, KNOWN, request)
    assert llm.scored == 0 and llm.draws == [(0.2, 0)] and "wants_checks" not in result.usage


def _ai(text: str):
    from langchain_core.messages import AIMessage

    return AIMessage(text)


VIDEO_REQUEST = "generate a video and audio about a dog running on the grass"
VIDEO = {"step": "a video", "task": "text-to-video", "id": 0, "args": {"text": "a dog running on the grass"}}
SOUND_OF_VIDEO = json.dumps({"wants": ["video", "audio"], "tasks": [
    VIDEO, {"step": "audio for the video", "task": "text-to-audio", "id": 1, "args": {"text": "<resource>-0"}}]})


@pytest.mark.parametrize("answer", ["yes", "no"])
async def test_a_confirmed_sound_for_a_made_video_reads_the_text_the_video_was_made_from(answer):
    """The sound reads the video as its text: the passes take the step out; when the model, asked alone,
    confirms the user wants audio back, the step reads the text the video was made from, with no re-ask. When it
    does not, the plan is drawn afresh as before, and the same question is not asked twice."""
    llm = _Scoring(responses=[_ai(SOUND_OF_VIDEO)], by_draw={(REDRAW_TEMPERATURE, 1): [SOUND_OF_VIDEO]},
                   answer=answer)
    result = await plan_with(llm, KNOWN, VIDEO_REQUEST)
    assert result.usage["wants_checks"] == 1
    if answer == "no":
        assert llm.draws == [(0.2, 0), (REDRAW_TEMPERATURE, 1)] and llm.scored == 1
        assert [t.task for t in result.plan.tasks] == ["text-to-video"]
        assert any("no task of the plan makes audio" in r["reason"] for r in result.repairs)
        return
    assert llm.draws == [(0.2, 0)] and result.usage["llm_calls"] == 1 and llm.scored == 2
    assert [(t.task, t.args) for t in result.plan.tasks] == [
        ("text-to-video", {"text": "a dog running on the grass"}),
        ("text-to-audio", {"text": "a dog running on the grass"})]
    reasons = [r["reason"] for r in result.repairs]
    assert any("reads the text task 0 made it from" in r for r in reasons)
    assert "task 1 (text-to-audio), taken out for reading a made result as its text" in reasons[-1]
    assert "the model confirms the user wants audio back" in reasons[-1]
    assert not any(r.startswith("rejected") for r in reasons)


async def test_the_re_ask_s_answer_gets_its_voice_back_too():
    """A first answer with another fault is asked again; the second answer's voice for the video is given back."""
    first = json.dumps({"wants": ["video"], "tasks": [VIDEO, {"step": "count", "task": "object-detection", "id": 1,
                                                              "args": {"image": "missing.jpg"}}]})
    llm = _Scoring(responses=[_ai(first)], by_draw={(REDRAW_TEMPERATURE, 1): [SOUND_OF_VIDEO]})
    result = await plan_with(llm, KNOWN, VIDEO_REQUEST)
    assert llm.draws == [(0.2, 0), (REDRAW_TEMPERATURE, 1)]
    assert [t.task for t in result.plan.tasks] == ["text-to-video", "text-to-audio"]
    assert result.repairs[0]["reason"].startswith("re-asked after: rejected: task 1 (object-detection)")


async def test_a_text_step_reading_a_made_picture_is_not_given_the_picture_s_prompt():
    """A step that writes text (a feature extraction) reading a drawing stays out: the prompt a picture was
    drawn from is not what an analysis of it reads."""
    answer = json.dumps({"wants": ["image", "audio"], "tasks": [
        {"step": "draw", "task": "text-to-image", "id": 0, "args": {"text": "a tiny house"}},
        {"step": "features", "task": "feature-extraction", "id": 1, "args": {"text": "<resource>-0"}}]})
    llm = _Scoring(responses=[_ai(answer)], by_draw={(REDRAW_TEMPERATURE, 1): [answer]})
    result = await plan_with(llm, KNOWN, "draw a tiny house and give me a sound for it")
    assert [t.task for t in result.plan.tasks] == ["text-to-image"] and llm.scored == 0
