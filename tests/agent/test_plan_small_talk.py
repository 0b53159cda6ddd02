"""A message planned as one task handed the whole message (a greeting as a text generation's prompt): asked alone
whether it is small talk, in both orders, by a margin; an empty plan when it is, the plan kept when it is not."""

import json
import re

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.model import Plan
from hugginggpt.agent.plan.outputs import CHAT, CHAT_MARGIN, echoes_message, only_chat
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with

KNOWN = task_table()


def plan(*tasks) -> Plan:
    return Plan.model_validate({"tasks": [{"id": i, **t} for i, t in enumerate(tasks)]})


@pytest.mark.parametrize("message, task, args", [
    ("hi there!", "text-generation", {"text": "hi there!"}),
    ("¡Muchas gracias, eres un crack!", "text-generation", {"text": "Muchas gracias eres un crack"}),
    ("Coucou ! Tu sais faire quoi exactement ?", "question-answering",
     {"question": "Tu sais faire quoi exactement ?", "context": "Coucou !"}),
    ("你好，你是谁？", "text-classification", {"text": "你好，你是谁？", "top_k": 1}),
    ("写一首关于大海的诗", "text-generation", {"text": "写一首关于大海的诗"}),  # echoed: the question decides
])
def test_one_task_reading_the_whole_message_echoes_it(message, task, args):
    assert echoes_message(plan({"task": task, "args": args}), message, KNOWN)


@pytest.mark.parametrize("message, tasks", [
    # a part of the message: a text quoted from a request
    ("summarize this: 'The river floods every spring and the town rebuilds.'",
     [{"task": "summarization", "args": {"text": "The river floods every spring and the town rebuilds."}}]),
    # two tasks
    ("hi there!", [{"task": "text-generation", "args": {"text": "hi there!"}},
                   {"task": "text-to-speech", "args": {"text": "<resource>-0"}}]),
    # no text argument holds it
    ("make the sky stormy", [{"task": "image-text-to-image", "args": {"image": "a.jpg", "prompt": "stormy sky"}}]),
    # an empty plan, an empty message
    ("hi", []),
    ("", [{"task": "text-generation", "args": {"text": ""}}]),
])
def test_other_plans_do_not_echo_the_message(message, tasks):
    assert not echoes_message(plan(*tasks), message, KNOWN)


def lead(by: float | None, log: list | None = None):
    """A scorer for the small-talk question: small talk leads by ``by`` (negative: the request leads); None: the
    first letter leads by 2 (a position, not an answer)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        chat = "A" if f"A) {CHAT[0]}" in human else "B"
        if by is None:
            return [2.0 if letter == "A" else 0.0 for letter in letters]
        return [by if letter == chat else 0.0 for letter in letters]

    return scores


def test_small_talk_counts_only_when_it_leads_by_the_margin_in_both_orders():
    asked: list[str] = []
    assert only_chat(lead(1.0, asked), "hi there!")
    assert f"A) {CHAT[0]}\nB) {CHAT[1]}" in asked[0] and f"A) {CHAT[1]}\nB) {CHAT[0]}" in asked[1]
    assert "hi there!" in asked[0]
    assert not only_chat(lead(CHAT_MARGIN / 2), "write a limerick about a cat")  # a near tie is no answer
    assert not only_chat(lead(-1.0), "write a limerick about a cat")
    assert not only_chat(lead(None), "hi there!")


class _Scoring(SamplingChatModel):
    """A controller that scores replies: small talk leads by ``by`` in the small-talk question."""

    by: float | None = 1.0
    asked: list = []

    def answer_scores(self, messages, answers):
        if CHAT[0] in messages[-1][1]:
            self.asked.append(messages[-1][1])
            return lead(self.by)(messages, answers)
        return [0.0 for _ in answers]  # another question (a twin's): a tie keeps the answer


def _answer(task: str, args: dict) -> AIMessage:
    return AIMessage(json.dumps({"wants": ["text"], "tasks": [{"step": "reply", "task": task, "id": 0, "args": args}]}))


async def test_small_talk_planned_as_a_task_leaves_the_plan_empty():
    llm = _Scoring(responses=[_answer("text-generation", {"text": "¡Muchas gracias, eres un crack!"})], asked=[])
    result = await plan_with(llm, KNOWN, "¡Muchas gracias, eres un crack!")
    assert result.plan.tasks == [] and len(llm.asked) == 2 and result.usage["wants_checks"] == 1
    assert re.search(r"whole message to text-generation; .* small talk", result.repairs[-1]["reason"])


async def test_a_request_the_model_calls_one_is_kept_and_a_file_or_the_switch_asks_nothing(monkeypatch):
    poem = _answer("text-generation", {"text": "写一首关于大海的诗"})
    llm = _Scoring(responses=[poem], by=-1.0, asked=[])
    result = await plan_with(llm, KNOWN, "写一首关于大海的诗")
    assert [t.task for t in result.plan.tasks] == ["text-generation"] and len(llm.asked) == 1  # settled at once
    question = {"image": "a.jpg", "question": "what is in a.jpg?"}  # the whole message, but it gives a file
    assert echoes_message(plan({"task": "visual-question-answering", "args": question}), "what is in a.jpg?", KNOWN)
    given = _Scoring(responses=[_answer("visual-question-answering", question)], asked=[])
    result = await plan_with(given, KNOWN, "what is in a.jpg?")
    assert [t.task for t in result.plan.tasks] == ["visual-question-answering"] and not given.asked
    monkeypatch.setenv("HUGGINGGPT_WANTS_CHECK", "off")
    off = _Scoring(responses=[_answer("text-generation", {"text": "hi there!"})], asked=[])
    result = await plan_with(off, KNOWN, "hi there!")
    assert [t.task for t in result.plan.tasks] == ["text-generation"] and not off.asked
