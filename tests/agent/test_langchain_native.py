"""Our tools and agents behave as LangChain's own parts do (issue 12's probes, one test each).

Tools inside ``create_agent``: failures reach the model as error ToolMessages, as a plain
StructuredTool's bad arguments do. Agents: ``stream`` yields pieces of the output (LCEL composes),
``astream_events(version="v2")`` shows one chain run with the LLM and tool runs nested under it and
the stages as custom events, a config ``run_id`` names the top run only, and stopping a stream
stops the run — the same for the three agents.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.agent import FunctionCallingAgent, GlobalPlanAgent, ReActAgent
from hugginggpt.agent.events import STAGE_EVENTS
from hugginggpt.tools import build_tools
from hugginggpt.tools.executors.hybrid import HybridExecutor

from .conftest import PictureExecutor, ReplayModel, script


class ToolCallingModel(ReplayModel):
    """Replays scripted AI messages (with tool calls); binding tools changes nothing."""

    def bind_tools(self, tools, **kwargs):
        return self


def call(name: str, call_id: str, **args: Any) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def tool_messages(state: dict) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


# ---------------------------------------------------------------- tools under create_agent


class Numbers(BaseModel):
    a: int = Field(description="A number.")


def test_tool_failures_reach_the_model_as_error_messages_like_a_plain_structured_tool(tmp_path, image):
    ours = build_tools(["image-to-text", "object-detection"], executor=PictureExecutor())
    plain = StructuredTool.from_function(lambda a: a + 1, name="add-one", description="Add one.", args_schema=Numbers)
    model = ToolCallingModel(responses=[
        AIMessage("", tool_calls=[call("image-to-text", "c1", picture="cat.png"),  # bad argument name
                                  call("object-detection", "c2", image=str(image)),  # the executor cannot run it
                                  call("add-one", "c3", a="not a number")]),  # LangChain's own tool, bad argument
        AIMessage("Sorry, those failed."),
    ])
    graph = create_agent(model, [*ours, plain])
    from hugginggpt.tools.resources import Workspace
    state = graph.invoke({"messages": [("user", "caption and detect")]},
                         {"configurable": {"workspace": Workspace(tmp_path / "ws", inputs=[image])}})
    messages = {m.tool_call_id: m for m in tool_messages(state)}
    assert state["messages"][-1].content == "Sorry, those failed."  # the loop went on
    assert [messages[c].status for c in ("c1", "c2", "c3")] == ["error", "error", "error"]
    assert "image: required argument missing" in messages["c1"].content
    assert "object-detection" in messages["c2"].content


def test_tool_output_is_short_text_for_the_model_and_the_envelope_as_artifact(tmp_path, image):
    from hugginggpt.tools.resources import Workspace

    executor = HybridExecutor(local=PictureExecutor(), policy="local")
    tool = build_tools(["image-to-text"], executor=executor)[0]
    config = {"configurable": {"workspace": Workspace(tmp_path / "ws", inputs=[image])}}
    message = tool.invoke(call("image-to-text", "c1", image=str(image)), config)
    assert message.status == "success" and message.content == "text: a 8x8 red picture"
    # the whole envelope, with the backend and model that actually ran it
    assert message.artifact == {"text": "a 8x8 red picture", "ran": {"backend": "test-pictures", "model": None}}
    assert tool.invoke({"image": str(image)}, config)["text"] == "a 8x8 red picture"  # Python callers: the envelope


# ---------------------------------------------------------------- the three agents


def react_agent(tools, tmp_path, *, final: str = "Final Answer: SHOUTED") -> ReActAgent:
    llm = script('Thought: shout it\nAction: echo\nAction Input: {"text": "hi"}', final)
    return ReActAgent(llm, [tools["echo"]], workspace_root=tmp_path / "runs")


def fc_agent(tools, tmp_path, *, final: str = "SHOUTED") -> FunctionCallingAgent:
    llm = ToolCallingModel(responses=[AIMessage("", tool_calls=[call("echo", "c1", text="hi")]), AIMessage(final)])
    return FunctionCallingAgent(llm, [tools["echo"]], workspace_root=tmp_path / "runs")


def global_agent(tools, tmp_path, *, final: str = "SHOUTED") -> GlobalPlanAgent:
    llm = script([{"task": "echo", "id": 0, "args": {"text": "hi"}}], final)
    return GlobalPlanAgent(llm, [tools["echo"]], workspace_root=tmp_path / "runs")


AGENTS = {"global": global_agent, "react": react_agent, "function-calling": fc_agent}


@pytest.mark.parametrize("kind", AGENTS)
def test_stream_yields_pieces_of_invokes_output_and_composes_in_lcel(kind, tools, tmp_path):
    chunks = list(AGENTS[kind](tools, tmp_path).stream("shout hi"))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    out = AGENTS[kind](tools, tmp_path).invoke("shout hi")
    assert set(merged) == set(out) == {"output", "plan", "selections", "results", "trace"}
    assert {k: v for k, v in merged.items() if k != "trace"} == {k: v for k, v in out.items() if k != "trace"}
    assert out["output"] == "SHOUTED" and out["results"][0]["result"] == {"text": "HI"}

    chain = AGENTS[kind](tools, tmp_path) | RunnableLambda(lambda o: o["output"])
    assert "".join(chain.stream("shout hi")) == "SHOUTED"
    assert (AGENTS[kind](tools, tmp_path) | RunnableLambda(lambda o: o["output"])).batch(["shout hi"]) == ["SHOUTED"]


@pytest.mark.parametrize("kind", AGENTS)
async def test_astream_events_nest_every_run_under_the_agent_and_show_stages(kind, tools, tmp_path):
    agent = AGENTS[kind](tools, tmp_path)
    run_id = uuid.uuid4()
    events = [e async for e in agent.astream_events("shout hi", {"run_id": run_id}, version="v2")]
    top = [e for e in events if e["run_id"] == str(run_id) and e["event"].startswith("on_chain")]
    assert [e["event"] for e in top] == ["on_chain_start", *["on_chain_stream"] * (len(top) - 2), "on_chain_end"]
    assert top[0]["name"] == agent.get_name() and top[-1]["data"]["output"]["output"] == "SHOUTED"
    # the config's run_id names the top run only
    assert sum(e["event"].endswith("_start") and e["run_id"] == str(run_id) for e in events) == 1
    llm = [e for e in events if e["event"] == "on_chat_model_start"]
    tool = [e for e in events if e["event"] == "on_tool_start"]
    assert llm and len(tool) == 1 and tool[0]["name"].startswith("echo")  # the global agent adds " #id"
    for event in llm + tool:
        assert event["parent_ids"] and event["parent_ids"][0] == str(run_id)
    stages = [e for e in events if e["event"] == "on_custom_event"]
    names = [e["name"] for e in stages]
    assert {"task_start", "task_end", "response"} <= set(names) <= STAGE_EVENTS
    assert all(e["run_id"] == str(run_id) and e["data"]["event"] == e["name"] for e in stages)  # the agent's run
    assert stages[names.index("task_end")]["data"]["result"] == {"text": "HI"}


@pytest.mark.parametrize("kind", AGENTS)
def test_stage_events_have_the_same_names_and_payloads_for_every_agent(kind, tools, tmp_path):
    events = list(AGENTS[kind](tools, tmp_path).stream_stage_events("shout hi"))
    assert {e["event"] for e in events} <= STAGE_EVENTS and events[-1]["event"] == "final"
    by_name = {e["event"]: e for e in events}
    assert set(by_name["task_start"]) == {"event", "t", "id", "task", "args", "dep", "model"}
    assert set(by_name["task_end"]) == {"event", "t", "id", "task", "result", "seconds"}
    assert set(by_name["response"]) == {"event", "t", "output", "invented_paths"}
    assert by_name["final"]["output"]["output"] == "SHOUTED" and by_name["final"]["t"] >= by_name["response"]["t"]


@pytest.mark.parametrize("kind", AGENTS)
def test_the_final_answer_of_every_agent_is_checked_for_invented_paths(kind, tools, tmp_path):
    answer = "Saved it to /tmp/made-up-result.png"
    final = f"Final Answer: {answer}" if kind == "react" else answer
    out = AGENTS[kind](tools, tmp_path, final=final).invoke("shout hi")
    assert out["output"].startswith(answer) and len(out["output"]) > len(answer)  # a correction note follows
    trace = json.loads(Path(out["trace"]).read_text())
    assert trace["invented_paths"] == ["/tmp/made-up-result.png"]


def slow_react(tools, tmp_path):
    llm = script('Action: sleep\nAction Input: {"seconds": 30}', "Final Answer: never")
    return ReActAgent(llm, [tools["sleep"]], workspace_root=tmp_path / "runs")


def slow_fc(tools, tmp_path):
    llm = ToolCallingModel(responses=[AIMessage("", tool_calls=[call("sleep", "c1", seconds=30)]), AIMessage("never")])
    return FunctionCallingAgent(llm, [tools["sleep"]], workspace_root=tmp_path / "runs")


def slow_global(tools, tmp_path):
    return GlobalPlanAgent(script([{"task": "sleep", "id": 0, "args": {"seconds": 30}}], "never"),
                           [tools["sleep"]], workspace_root=tmp_path / "runs")


@pytest.mark.parametrize("make", [slow_global, slow_react, slow_fc], ids=["global", "react", "function-calling"])
async def test_abandoning_the_stream_stops_the_run(make, tools, tmp_path, recorder):
    agent = make(tools, tmp_path)
    stream = agent.astream_stage_events("wait")
    async for event in stream:
        if event["event"] == "task_start":
            break
    await stream.aclose()
    await asyncio.sleep(0.2)
    trace = json.loads(next((tmp_path / "runs").glob("*/trace.json")).read_text())
    assert trace["error"].startswith("CancelledError") and recorder.calls == []  # the tool never finished
    assert len(agent.llm.received if hasattr(agent.llm, "received") else trace["llm_calls"]) == 1


def test_sync_stream_stops_the_run_when_closed(tools, tmp_path, recorder):
    agent = slow_fc(tools, tmp_path)
    stream = agent.stream_stage_events("wait")
    for event in stream:
        if event["event"] == "task_start":
            break
    stream.close()  # returns once the run has stopped and its trace is written
    trace = json.loads(next((tmp_path / "runs").glob("*/trace.json")).read_text())
    assert trace["error"].startswith("CancelledError") and recorder.calls == []


def test_the_global_plan_scheduler_still_gets_typed_errors_from_our_tools(tmp_path, image):
    """Plain-argument calls raise: the scheduler records the typed error's line and skips dependants."""
    tools = build_tools(["image-to-text", "text-to-speech"], executor=PictureExecutor())
    plan = [{"task": "image-to-text", "id": 0, "args": {"image": "missing.png"}},
            {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]
    agent = GlobalPlanAgent(script(plan, "It failed."), tools, workspace_root=tmp_path / "runs")
    out = agent.invoke({"input": "caption missing.png and read it aloud", "files": [str(image)]})
    assert out["results"][0]["status"] == "failed"
    assert out["results"][0]["error"].startswith("image-to-text: argument 'image':")  # ResourceError's line
    assert out["results"][1]["status"] == "skipped"


def test_the_function_calling_agent_sends_its_prompt_file_as_the_system_message(tools, tmp_path):
    from langchain_core.messages import SystemMessage

    from hugginggpt.prompts import load_prompt

    agent = fc_agent(tools, tmp_path)
    agent.invoke("shout hi")
    system = agent.llm.received[0][0]
    assert isinstance(system, SystemMessage) and system.content == load_prompt("function_calling")
    assert "<resource>-N" in system.content
