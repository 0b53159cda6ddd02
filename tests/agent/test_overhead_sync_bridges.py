"""The run lifecycle's sync calls and stage-event streams (hugginggpt/agent/run.py) keep the agent's
behaviour: sync calls from inside a running event loop (Jupyter), from many threads, nested inside a
run, stage events through one queue, ``ainvoke`` recording the same events, callbacks, the trace."""

import asyncio
import contextvars
import json
import threading
from pathlib import Path

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.trace import Trace
from hugginggpt.errors import PlanError

from .conftest import CallLog, script

PLAN = [{"task": "echo", "id": 0, "args": {"text": "hi"}},
        {"task": "echo", "id": 1, "dep": [0], "args": {"text": "<resource>-0 again"}}]
EVENTS = [("plan", None), ("selection", None), ("task_start", 0), ("task_end", 0),
          ("task_start", 1), ("task_end", 1), ("response_delta", None), ("response", None), ("final", None)]


def echo_agent(tools, tmp_path, *answers):
    return GlobalPlanAgent(script(*(answers or (PLAN, "Done."))), [tools["echo"]], workspace_root=tmp_path / "runs")


def kinds(events):
    return [(e["event"], e.get("id")) for e in events]


async def test_sync_invoke_and_stream_inside_a_running_loop(tools, tmp_path):
    """As in a notebook cell: the caller's thread already runs an event loop."""
    asyncio.get_running_loop()  # we are inside one
    out = echo_agent(tools, tmp_path).invoke("shout hi twice")
    assert out["results"][1]["result"] == {"text": "HI AGAIN"} and out["output"] == "Done."
    events = list(echo_agent(tools, tmp_path).stream_stage_events("shout hi twice"))
    assert kinds(events) == EVENTS
    assert events[-1]["output"]["results"][0]["result"] == {"text": "HI"}


async def test_sync_errors_surface_in_the_caller_inside_a_running_loop(tools, tmp_path):
    with pytest.raises(PlanError, match="planning failed twice"):
        echo_agent(tools, tmp_path, "no plan", "still none").invoke("do something")
    with pytest.raises(PlanError, match="planning failed twice"):
        list(echo_agent(tools, tmp_path, "no plan", "still none").stream_stage_events("do something"))


def test_sync_calls_from_many_threads_at_once(tools, tmp_path):
    """``batch`` and user threads share the private loop; every call gets its own answer."""
    agents = [echo_agent(tools, tmp_path, [{"task": "echo", "id": 0, "args": {"text": f"n{i}"}}], f"answer {i}")
              for i in range(6)]
    outputs: dict[int, dict] = {}
    threads = [threading.Thread(target=lambda i=i: outputs.__setitem__(i, agents[i].invoke("go")))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {i: (o["output"], o["results"][0]["result"]["text"]) for i, o in outputs.items()} == {
        i: (f"answer {i}", f"N{i}") for i in range(6)}


def test_sync_invoke_carries_the_callers_context_variables(tools, tmp_path):
    marker = contextvars.ContextVar("marker", default="unset")
    seen = []

    class Probe(BaseCallbackHandler):
        def on_tool_start(self, serialized, input_str, **kwargs):
            seen.append(marker.get())

    marker.set("from the caller")
    echo_agent(tools, tmp_path).invoke("go", {"callbacks": [Probe()]})
    assert seen == ["from the caller", "from the caller"]


def test_a_sync_call_nested_inside_a_run_does_not_deadlock(tools, tmp_path):
    """A callback that runs on the agent's loop thread and itself calls ``invoke`` synchronously."""
    inner = echo_agent(tools, tmp_path, [], "inner answer")
    answers = []

    class Nested(BaseCallbackHandler):
        run_inline = True  # called on the loop's own thread

        def on_tool_end(self, output, **kwargs):
            if not answers:
                answers.append(inner.invoke("hello")["output"])

    echo_agent(tools, tmp_path).invoke("go", {"callbacks": [Nested()]})
    assert answers == ["inner answer"]


async def test_ainvoke_records_the_same_events_that_astream_yields(tools, tmp_path):
    streamed = [e async for e in echo_agent(tools, tmp_path).astream_stage_events("go")]
    out = await echo_agent(tools, tmp_path).ainvoke("go")
    recorded = json.loads(Path(out["trace"]).read_text())["events"]
    # ``final`` is the return value, not a trace event; the answer's pieces are not kept (its ``response`` is)
    assert kinds(recorded) == [k for k in kinds(streamed)[:-1] if k[0] != "response_delta"]
    assert recorded[3]["result"] == streamed[3]["result"]


async def test_astream_raises_the_runs_error_after_the_events_so_far(tools, tmp_path):
    agent = echo_agent(tools, tmp_path, PLAN)  # no answer left for the response stage
    seen = []
    with pytest.raises(Exception, match="only 1 answers"):
        async for event in agent.astream_stage_events("go"):
            seen.append(event["event"])
    assert seen == ["plan", "selection", "task_start", "task_end", "task_start", "task_end"]


def test_stopping_a_sync_stream_cancels_the_run_and_writes_the_trace(tools, tmp_path, recorder):
    agent = GlobalPlanAgent(script([{"task": "sleep", "id": 0, "args": {"seconds": 30}}], "never"),
                            [tools["sleep"]], workspace_root=tmp_path / "runs")
    stream = agent.stream_stage_events("wait")
    for event in stream:
        if event["event"] == "task_start":
            break
    stream.close()  # returns only once the run has stopped
    trace = json.loads(next((tmp_path / "runs").glob("*/trace.json")).read_text())
    assert trace["error"].startswith("CancelledError") and recorder.calls == []


async def test_callbacks_of_every_kind_still_see_every_call(tools, tmp_path):
    """Handlers dispatched to threads (no ``run_inline``) see the LLM calls and both tool calls."""
    log = CallLog()
    assert not getattr(log, "run_inline", False)
    await echo_agent(tools, tmp_path).ainvoke("go", {"callbacks": [log]})
    assert log.events == [("chain", "GlobalPlanAgent"), ("llm", "chat"), ("tool", "echo"), ("tool", "echo"),
                          ("llm", "chat")]


def test_trace_is_one_key_per_line_with_secrets_redacted(tmp_path):
    trace = Trace(tmp_path / "trace.json", input="use sk-abcdefghijkl and hf_abcdefghijkl")
    trace.event("plan", plan=[{"args": {"text": "Bearer abcdefghijkl", "api_key": "x"}}])
    text = trace.write().read_text()
    data = json.loads(text)
    assert data["input"] == "use *** and ***"
    assert data["events"][0]["plan"] == [{"args": {"text": "Bearer ***", "api_key": "***"}}]
    assert text.splitlines()[1].startswith('"started_at": ') and text.endswith("}\n")
    assert not list(tmp_path.glob(".trace-*"))  # no temporary file left behind


async def test_selection_builds_each_constrained_model_once_per_agent(tools, tmp_path):
    """Same candidates on the next run: the structured-output runnable is reused, not rebuilt."""
    from .conftest import Card, catalog_of

    plan = [{"task": "image-to-text", "id": 0, "args": {"image": "cat.png"}}]
    choice = {"0": {"id": "org/b", "reason": "smaller"}}
    llm = script(plan, choice, "One.", plan, choice, "Two.", structured=True)
    catalog = catalog_of([Card("org/a", "image-to-text", 9), Card("org/b", "image-to-text", 3)])
    agent = GlobalPlanAgent(llm, [tools["image-to-text"]], catalog, workspace_root=tmp_path / "runs")
    outputs = [await agent.ainvoke("caption cat.png"), await agent.ainvoke("caption cat.png")]
    assert [o["selections"][0]["model"] for o in outputs] == ["org/b", "org/b"]
    assert [o["results"][0]["result"] for o in outputs] == [{"text": "a photo of a cat"}] * 2
    assert [o["output"] for o in outputs] == ["One.", "Two."]
    assert [s["title"] for s in llm.schemas].count("model_selection") == 1
    agent.llm = script(plan, choice, "Three.", structured=True)  # a new controller gets its own
    assert (await agent.ainvoke("caption cat.png"))["selections"][0] == {"model": "org/b", "reason": "smaller"}
    assert [s["title"] for s in agent.llm.schemas].count("model_selection") == 1
