"""The stage context (``AgentRun.stage``): the run keeps each stage's bookkeeping, for any agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.answer_check import Answer
from hugginggpt.agent.run import Agent, AgentRun
from hugginggpt.llm.content import REPETITION


class Staged(Agent):
    """An agent of two stages; ``fail`` makes the second one raise."""

    agent_name = "staged"

    def __init__(self, root: Path, fail: bool = False):
        self.workspace_root = root
        self.fail = fail

    async def _steps(self, run: AgentRun):
        async with run.stage("plan") as stage:
            run.trace.add_llm_call("plan", "prompt", "answer", finish_reason=REPETITION)  # an answer cut short
            stage.record(plan=[{"task": "echo", "id": 0, "dep": [], "args": {}}], repairs=[])
            stage.announce("plan", plan=[], repairs=[])
        yield {"plan": [{"task": "echo", "id": 0, "dep": [], "args": {}}]}
        async with run.stage("response") as stage:
            if self.fail:
                raise RuntimeError("the stage broke")
            stage.answered(Answer("done", invented=["/nowhere.png"], numbers=["0.123"], fallback="all I have"))
        yield {"output": "done"}


def trace_of(root: Path) -> dict:
    (path,) = root.glob("*/trace.json")
    return json.loads(path.read_text())


async def test_a_stage_records_its_fields_times_itself_and_closes_with_its_event(tmp_path):
    events = []
    async for event in Staged(tmp_path).astream_stage_events("go"):
        events.append(event)
    assert [e["event"] for e in events] == ["llm_cut_off", "plan", "response", "final"]  # cut-offs first
    assert events[0]["stage"] == "plan" and "repeating itself" in events[0]["note"]
    assert events[2]["output"] == "done" and events[2]["invented_paths"] == ["/nowhere.png"]
    trace = trace_of(tmp_path)
    assert set(trace["timings"]) == {"plan", "response"}
    assert trace["plan"][0]["task"] == "echo" and trace["repairs"] == []
    assert (trace["output"], trace["invented_paths"], trace["invented_numbers"], trace["response_fallback"]) == (
        "done", ["/nowhere.png"], ["0.123"], "all I have")
    assert "response_llm" not in trace
    assert trace["selections"] == {} and trace["results"] == {}  # the defaults of fields no stage wrote


async def test_a_failed_stage_keeps_its_time_and_no_event(tmp_path):
    agent = Staged(tmp_path, fail=True)
    events = []
    with pytest.raises(RuntimeError, match="the stage broke"):
        async for event in agent.astream_stage_events("go"):
            events.append(event)
    assert [e["event"] for e in events] == ["llm_cut_off", "plan"]
    trace = trace_of(tmp_path)
    assert set(trace["timings"]) == {"plan", "response"}  # the failed stage's time too
    assert trace["error"].startswith("RuntimeError") and trace["output"] == ""


def test_an_answer_says_in_the_trace_only_what_it_has():
    assert Answer("hi").trace_fields() == {"output": "hi", "invented_paths": []}
    fields = Answer("none ran", skipped="skipped: no task produced a result").trace_fields()
    assert fields["response_llm"] == "skipped: no task produced a result"


def test_the_message_state_answer_is_unchanged(tmp_path):
    out = Staged(tmp_path).invoke({"messages": [("human", "go")]})
    assert isinstance(out["messages"][-1], AIMessage) and out["messages"][-1].content == "done"
