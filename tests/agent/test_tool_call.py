"""The one tool-call policy (``invoke_tool``): the events, outcomes and error lines of every way a
tool call ends, for both agent families."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage

from hugginggpt.agent.tool_call import Outcome, ToolCall, invoke_tool, read_reply
from hugginggpt.errors import TaskError


class Events:
    def __init__(self):
        self.seen: list[tuple[str, dict]] = []

    async def emit(self, name, **fields):
        self.seen.append((name, fields))

    @property
    def names(self):
        return [name for name, _ in self.seen]


def call_of(invoke, args=None, **kwargs):
    async def run(resolved):
        return await invoke(resolved) if asyncio.iscoroutinefunction(invoke) else invoke(resolved)

    return ToolCall(3, "echo", run, {"text": "hi"} if args is None else args, **kwargs)


async def test_a_result_is_reported_started_then_ended():
    events = Events()
    outcome = await invoke_tool(events, call_of(lambda args: {"text": args["text"].upper()}, dep=[1], model="org/m",
                                                shown_args={"text": "<resource>-1"}), 5)
    assert (outcome.status, outcome.result, outcome.error) == ("ok", {"text": "HI"}, None)
    assert events.names == ["task_start", "task_end"]
    assert events.seen[0][1] == {"id": 3, "task": "echo", "args": {"text": "<resource>-1"}, "dep": [1], "model": "org/m"}
    assert events.seen[1][1]["result"] == {"text": "HI"} and events.seen[1][1]["seconds"] == outcome.seconds
    assert outcome.record() == {"task": "echo", "status": "ok", "result": {"text": "HI"}, "error": None}


async def test_an_exception_is_one_error_line_naming_the_tool():
    def boom(args):
        raise ValueError("bad input\nsecond line")

    events = Events()
    outcome = await invoke_tool(events, call_of(boom), 5)
    assert (outcome.status, outcome.error, outcome.error_type) == ("failed", "echo: ValueError: bad input", "ValueError")
    assert events.names == ["task_start", "task_failed"] and events.seen[1][1]["error"] == outcome.error
    assert outcome.record()["error_type"] == "ValueError"


async def test_a_library_error_keeps_its_own_line():
    def fails(args):
        raise TaskError("echo", "the model crashed")

    outcome = await invoke_tool(Events(), call_of(fails), 5)
    assert outcome.error == "echo: the model crashed"


async def test_a_timeout_names_its_limit():
    async def slow(args):
        await asyncio.sleep(5)

    outcome = await invoke_tool(Events(), call_of(slow), 0.05)
    assert outcome.timed_out and outcome.error == "echo: timed out after 0.05 s" and outcome.error_type == "TimeoutError"
    outcome = await invoke_tool(Events(), call_of(slow), 0.05, timeout_label="300 s (the run's time budget)")
    assert outcome.error == "echo: timed out after 300 s (the run's time budget)"


async def test_arguments_that_cannot_be_made_fail_the_call_before_it_starts():
    def arguments():
        raise TaskError("echo", "<resource>-1 has no result")

    events, ran = Events(), []
    outcome = await invoke_tool(events, call_of(lambda args: ran.append(args), args=arguments), 5)
    assert outcome.error == "echo: <resource>-1 has no result" and ran == []
    assert events.names == ["task_failed"]


async def test_langgraph_control_flow_passes_through():
    from langgraph.errors import GraphInterrupt

    def interrupt(args):
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        await invoke_tool(Events(), call_of(interrupt), 5)


@pytest.mark.parametrize(("reply", "status", "result", "error"), [
    (ToolMessage("done", tool_call_id="1", artifact={"image": "/a.png"}), "ok", {"image": "/a.png"}, None),
    (ToolMessage('{"text": "cat"}', tool_call_id="1"), "ok", {"text": "cat"}, None),
    (ToolMessage("plain", tool_call_id="1"), "ok", {"text": "plain"}, None),
    (ToolMessage("no such file", tool_call_id="1", status="error"), "failed", None, "echo: no such file"),
    ("text", "ok", {"text": "text"}, None),
])
def test_what_a_tool_answered_is_read_one_way(reply, status, result, error):
    outcome = read_reply("echo", reply)
    assert isinstance(outcome, Outcome) and (outcome.status, outcome.result, outcome.error) == (status, result, error)
    assert outcome.reply is reply
