"""Fuzzing the ReAct text protocol: any model turn is read as an action, a final answer, or a
``ReActParseError`` that goes back to the model; a whole run on arbitrary turns ends within its limits
with a complete trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from hugginggpt.agent.react import (
    Action,
    FinalAnswer,
    ReActAgent,
    ReActParseError,
    parse_step,
)
from hugginggpt.errors import LLMError
from hugginggpt.tools import build_tools
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.results import envelope
from tests.reliability.strategies import (
    FAST,
    INJECTIONS,
    SLOW,
    arg_values,
    json_values,
    llm_texts,
    mutated_name,
)

TASKS = ["summarization", "image-classification", "text-classification", "zero-shot-classification",
         "unconditional-image-generation"]


class EchoExecutor(Executor):
    """Answers every call with the arguments it got, so any accepted call succeeds."""

    name = "echo"

    def can_run(self, task: str, model: str | None) -> bool:
        return True

    def run(self, call: TaskCall) -> dict[str, Any]:
        return envelope(text=json.dumps(call.args, default=str)[:200], task=call.task.name)


@pytest.fixture(scope="module")
def tools():
    return build_tools(TASKS, executor=EchoExecutor())


tool_names = st.sampled_from(TASKS).flatmap(mutated_name) | st.text(max_size=15) | st.sampled_from(
    ["`summarization`", "[summarization]", "summarization()", "None", ""])
action_inputs = (llm_texts(st.dictionaries(st.sampled_from(["text", "image", "top_k", "candidate_labels", "x"]),
                                           arg_values(), max_size=3))
                 | llm_texts(json_values()) | st.text(max_size=40) | st.sampled_from(INJECTIONS))
parts = st.one_of(
    st.builds("Thought: {}".format, st.text(max_size=40)),
    st.builds("Action: {}".format, tool_names),
    st.builds("Action Input: {}".format, action_inputs),
    st.builds("Action 1: {}\nAction 1 Input: {}".format, tool_names, action_inputs),
    st.builds("Final Answer: {}".format, st.text(max_size=40)),
    st.builds("Observation: {}".format, st.text(max_size=20)),
    st.text(max_size=40),
)
turns = st.lists(parts, max_size=6).flatmap(
    lambda ps: st.sampled_from(["\n", "\n\n", " ", "\r\n", ""]).map(lambda sep: sep.join(ps)))


def check_turn(text: str, tools: list) -> None:
    by_name = {t.name: t for t in tools}
    try:
        step = parse_step(text, by_name)
    except ReActParseError as exc:
        assert str(exc)
        return
    if isinstance(step, FinalAnswer):
        assert isinstance(step.answer, str)
    else:
        assert isinstance(step, Action) and step.tool in tools and isinstance(step.args, dict)


@pytest.mark.timeout(120)
@FAST
@given(turns)
def test_fuzz_react_turns(tools, text: str) -> None:
    check_turn(text, tools)


@pytest.mark.slow
@pytest.mark.timeout(600)
@SLOW
@given(turns)
def test_fuzz_react_turns_10k(tools, text: str) -> None:
    check_turn(text, tools)


@pytest.mark.timeout(300)
@settings(FAST, max_examples=40)  # whole agent runs: fewer cases
@given(script=st.lists(turns, min_size=1, max_size=4))
def test_fuzz_react_runs_end_within_limits(tools, tmp_path_factory, script: list[str]) -> None:
    root = tmp_path_factory.mktemp("react-fuzz")
    llm = FakeMessagesListChatModel(responses=[AIMessage(t) for t in script])
    agent = ReActAgent(llm, tools, max_steps=3, max_llm_calls=4, workspace_root=root)
    try:
        output = agent.invoke("summarize the text and classify it")
    except LLMError as exc:
        assert str(exc)
        return
    assert isinstance(output["output"], str)
    trace = json.loads(Path(output["trace"]).read_text())
    assert trace["usage"]["llm_calls"] <= 4 and len(output["plan"]) <= 3
    for outcome in output["results"].values():
        assert outcome["status"] in ("ok", "failed")


def test_deeply_nested_action_input_is_a_parse_error(tools) -> None:
    with pytest.raises(ReActParseError, match="nested too deeply"):
        parse_step("Action: summarization\nAction Input: " + "[" * 5000 + "]" * 5000, {t.name: t for t in tools})
