"""Fuzzing stage 1: whatever the planning LLM answers, the parser and validator return a runnable plan
with reasons for every repair, or raise ``PlanError`` / ``LLMError``; never anything else, never a hang.
"""

from __future__ import annotations

import graphlib
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from hugginggpt.agent.global_plan import GlobalPlanAgent
from hugginggpt.agent.plan import Plan
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.agent.plan.parse import parse_plan_text
from hugginggpt.errors import LLMError, PlanError
from hugginggpt.tools import build_tools
from tests.reliability.strategies import (
    FAST,
    KNOWN,
    SLOW,
    json_values,
    llm_texts,
    plans,
)


def assert_runnable(plan: Plan, repairs: list[dict]) -> None:
    """What the scheduler relies on: known tasks, unique ids, deps = references, acyclic, args present."""
    ids = [t.id for t in plan.tasks]
    assert len(set(ids)) == len(ids)
    for step in plan.tasks:
        assert step.task in KNOWN
        assert step.dep == sorted(step.references())
        assert step.id not in step.dep and set(step.dep) <= set(ids)
        for arg in KNOWN[step.task].args:
            if arg.required:
                assert step.args.get(arg.name) not in (None, "", []), (step, arg.name)
            names = {a.name for a in KNOWN[step.task].args}
            assert set(step.args) <= names
    assert sorted(_topological_order(plan)) == sorted(ids)  # acyclic
    for repair in repairs:
        assert set(repair) == {"task_id", "reason", "pass"} and isinstance(repair["reason"], str) and repair["reason"]
    json.dumps(plan.as_list())


def check_raw_plan(raw, request: str | None = None) -> None:
    try:
        plan, repairs = validate_plan(raw, KNOWN, request)
    except PlanError as exc:
        assert str(exc)
        return
    assert_runnable(plan, repairs)


def check_plan_text(text: str) -> None:
    try:
        raw = parse_plan_text(text)
    except PlanError as exc:
        assert str(exc)
        return
    check_raw_plan(raw)


# ------------------------------------------------------------------------------- fast: always run


@pytest.mark.timeout(120)
@FAST
@given(plans())
def test_fuzz_validate_plan(raw) -> None:
    check_raw_plan(raw)


@pytest.mark.timeout(120)
@FAST
@given(plans(), st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_fuzz_validate_plan_with_a_request_in_any_script(raw, request) -> None:
    check_raw_plan(raw, request)


@pytest.mark.timeout(120)
@FAST
@given(llm_texts(plans()) | st.text(max_size=200) | llm_texts(json_values()))
def test_fuzz_parse_plan_text(text: str) -> None:
    check_plan_text(text)


@pytest.fixture(scope="module")
def planner_agent_tools():
    return build_tools()  # no executor is created: planning never runs a tool


@pytest.mark.timeout(300)
@settings(FAST, max_examples=60)  # a whole agent stage per case: fewer cases, same shapes
@given(first=llm_texts(plans()) | st.text(max_size=100), second=llm_texts(plans()) | st.text(max_size=100))
def test_fuzz_planning_stage_with_a_scripted_llm(planner_agent_tools, first: str, second: str) -> None:
    """The whole stage (first answer, re-ask with the error, second answer) on arbitrary answers."""
    llm = FakeMessagesListChatModel(responses=[AIMessage(first), AIMessage(second)])
    agent = GlobalPlanAgent(llm, tools=planner_agent_tools, structured=False)
    try:
        result = agent.plan("make a picture of a cat and describe it")
    except (PlanError, LLMError) as exc:
        assert str(exc)
        return
    assert_runnable(result.plan, result.repairs)
    assert 1 <= len(result.raw_outputs) <= 2


# --------------------------------------------------------------------------- slow: 10,000 cases


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(plans())
def test_fuzz_validate_plan_10k(raw) -> None:
    check_raw_plan(raw)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(llm_texts(plans()) | st.text(max_size=200))
def test_fuzz_parse_plan_text_10k(text: str) -> None:
    check_plan_text(text)


# ------------------------------------------------------------------------- explicit edge cases


def _chain(n: int, *, reverse: bool = False, broken_root: bool = False) -> list[dict]:
    steps = [{"task": "summarization", "id": 0, "dep": [-1],
              "args": {"text": "" if broken_root else "a long text"}}]
    steps += [{"task": "summarization", "id": i, "dep": [i - 1], "args": {"text": f"<resource>-{i - 1}"}}
              for i in range(1, n)]
    return steps[::-1] if reverse else steps


def _topological_order(plan) -> list[int]:
    """Task ids, each after its dependencies; raises ``graphlib.CycleError`` for a cyclic plan."""
    return list(graphlib.TopologicalSorter({t.id: set(t.dep) for t in plan.tasks}).static_order())


@pytest.mark.timeout(60)
def test_a_thousand_task_plan_is_validated_quickly() -> None:
    started = time.perf_counter()
    plan, repairs = validate_plan(_chain(1000), KNOWN, max_tasks=None)  # uncapped: the validator's own cost
    assert len(plan.tasks) == 1000 and repairs == []
    assert _topological_order(plan) == list(range(1000))
    wide = [{"task": "text-classification", "id": i, "dep": [], "args": {"text": str(i)}} for i in range(1000)]
    assert len(validate_plan(wide, KNOWN, max_tasks=None)[0].tasks) == 1000
    assert time.perf_counter() - started < 10


@pytest.mark.timeout(60)
def test_a_thousand_task_plan_with_a_broken_root_rejects_the_whole_chain() -> None:
    started = time.perf_counter()
    plan, repairs = validate_plan(_chain(1000, reverse=True, broken_root=True), KNOWN, max_tasks=None)
    assert plan.tasks == []
    assert len([r for r in repairs if r["reason"].startswith("rejected")]) == 1000
    assert time.perf_counter() - started < 20


def test_cycles_self_references_and_duplicate_ids_are_repaired_with_reasons() -> None:
    raw = [
        {"task": "summarization", "id": 0, "dep": [1], "args": {"text": "<resource>-1"}},
        {"task": "summarization", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
        {"task": "summarization", "id": 2, "dep": [2], "args": {"text": "<resource>-2"}},
        {"task": "summarization", "id": 3, "dep": [], "args": {"text": "fine"}},
        {"task": "summarization", "id": 3, "dep": [], "args": {"text": "duplicate id"}},
        {"task": "Text_Classification", "id": 10**40, "dep": "3", "args": {"txt": "<resource-3>"}},
    ]
    plan, repairs = validate_plan(raw, KNOWN)
    assert_runnable(plan, repairs)
    kept = {t.id: t for t in plan.tasks}
    renumbered = 10**40 + 1  # the duplicate 3 gets the next free id; later references follow it
    assert set(kept) == {3, renumbered, 10**40}
    assert kept[10**40].task == "text-classification"
    assert kept[10**40].args == {"text": f"<resource>-{renumbered}"} and kept[10**40].dep == [renumbered]
    reasons = " | ".join(r["reason"] for r in repairs)
    for expected in ("cycle", "duplicate id 3", "renamed to 'text'", "closest known"):
        assert expected in reasons
    for dropped in (0, 1, 2):  # the cycle and the self-reference: gone, each with its own reason
        assert any(r["task_id"] == dropped and r["reason"].startswith("rejected") for r in repairs)


@pytest.mark.parametrize("answer", [
    "no plan here", "", "   ", "[", "]", "{}", "null", "42", '"a string"', "[1, 2, 3]", '[{"task": 5}]',
    '{"tasks": 7}', "```json\n```", "[" * 50 + "]" * 50,
])
def test_junk_answers_give_a_plan_error_or_an_empty_plan(answer: str) -> None:
    check_plan_text(answer)


def test_deeply_nested_json_is_a_plan_error() -> None:
    with pytest.raises(PlanError):
        parse_plan_text("[" * 5000 + "]" * 5000)


@pytest.mark.timeout(60)
def test_a_long_unclosed_answer_is_rejected_quickly() -> None:
    started = time.perf_counter()
    with pytest.raises(PlanError):
        parse_plan_text("{" * 6_000)
    assert time.perf_counter() - started < 1  # linear parsing takes milliseconds
