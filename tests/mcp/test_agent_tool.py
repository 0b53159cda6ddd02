"""The agent tool (`hugginggpt`) through the SDK's client, on a server object made in process with a
scripted controller passed in: the global-plan agent plans, runs the tiny local models on the allowed
file, and the answer comes back with the produced audio as MCP content plus its path. Without a
controller the tool is a tool error naming --llm, and listing the tools never loads one."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from hugginggpt import build
from tests.mcp.conftest import texts

pytest.importorskip("mcp")


class Script(FakeMessagesListChatModel):
    """Answers from the script once, in order; asking past it fails the test."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.i >= len(self.responses):
            raise AssertionError("the agent asked the controller more often than scripted")
        message = self.responses[self.i]
        self.i += 1
        from langchain_core.outputs import ChatGeneration, ChatResult

        return ChatResult(generations=[ChatGeneration(message=message)])


async def test_the_agent_tool_plans_runs_and_returns_the_answer_with_the_produced_audio(settings, place, monkeypatch):
    from mcp.shared.memory import create_connected_server_and_client_session

    from hugginggpt.mcp import AGENT_TOOL, HuggingGPTMCP

    image = place["allowed"] / "cat.png"
    plan = [{"step": "describe cat.png", "task": "image-to-text", "id": 0, "args": {"image": str(image)}},
            {"step": "read it aloud", "task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}]
    controller = Script(responses=[AIMessage(json.dumps(plan)), AIMessage("I described the picture and read it aloud.")])
    monkeypatch.setattr(build, "make_llm", lambda settings: pytest.fail("a controller was given: none is loaded"))
    app = HuggingGPTMCP(settings, allow=[place["allowed"]], llm=controller)
    lines = []

    async def progress(step, total, message):
        lines.append(message)

    with anyio.fail_after(180):
        async with create_connected_server_and_client_session(app.server()) as session:
            result = await session.call_tool(AGENT_TOOL, {"request": "Describe cat.png, then read it aloud",
                                                          "files": ["cat.png"]}, progress_callback=progress)
    assert not result.isError, texts(result)
    # the run's stages, as MCP progress notifications (a long run keeps the client informed)
    assert lines[0] == "plan: image-to-text, text-to-speech"
    assert "task 0 image-to-text: done" in lines and "task 1 text-to-speech: done" in lines
    assert lines[-1] == "answer written"
    assert texts(result)[0] == "I described the picture and read it aloud."
    output = result.structuredContent
    assert [step["task"] for step in output["plan"]] == ["image-to-text", "text-to-speech"]
    assert [outcome["status"] for outcome in output["results"].values()] == ["ok", "ok"]
    wav = Path(output["results"]["1"]["result"]["audio"])
    audio = [block for block in result.content if block.type == "audio"]
    assert len(audio) == 1 and f"audio file: {wav}" in texts(result)
    assert wav.is_relative_to(app.root) and Path(output["trace"]).is_relative_to(app.root)  # readable by later calls
    trace = json.loads(Path(output["trace"]).read_text(encoding="utf-8"))
    assert str(image) in json.dumps(trace)  # the allowed file, resolved, is what the agent was given


async def test_listing_loads_no_controller_and_the_agent_tool_names_the_flag_without_one(settings, place, monkeypatch):
    from mcp.shared.memory import create_connected_server_and_client_session

    from hugginggpt.mcp import AGENT_TOOL, HuggingGPTMCP

    monkeypatch.setattr(build, "make_llm", lambda settings: pytest.fail("no controller is configured"))
    app = HuggingGPTMCP(settings, allow=[place["allowed"]])
    async with create_connected_server_and_client_session(app.server()) as session:
        assert AGENT_TOOL in {tool.name for tool in (await session.list_tools()).tools}
        result = await session.call_tool(AGENT_TOOL, {"request": "Describe cat.png", "files": ["cat.png"]})
        bad = await session.call_tool(AGENT_TOOL, {"request": "x", "colour": "red"})
    needs = ("the hugginggpt tool needs a controller LLM: start the server with --llm SPEC "
             "(e.g. openai:gpt-4o-mini or gguf:/path/model.gguf) or set HUGGINGGPT_LLM")
    assert result.isError and texts(result) == [needs]
    assert bad.isError and "colour: unknown argument" in texts(bad)[0]


async def test_a_configured_controller_loads_on_the_first_agent_call_only(settings, place, monkeypatch):
    """`--llm` given: build.make_llm runs on the first agent call (not at start, not at listing), once."""
    from dataclasses import replace

    from mcp.shared.memory import create_connected_server_and_client_session

    from hugginggpt.mcp import AGENT_TOOL, HuggingGPTMCP

    loads = []

    def make_llm(settings):
        loads.append(settings.llm)
        return Script(responses=[AIMessage("[]"), AIMessage("Hello!"), AIMessage("[]"), AIMessage("Hello again!")])

    monkeypatch.setattr(build, "make_llm", make_llm)
    app = HuggingGPTMCP(replace(settings, llm="openai:gpt-4o-mini"), allow=[place["allowed"]])
    async with create_connected_server_and_client_session(app.server()) as session:
        await session.list_tools()
        assert loads == []
        first = await session.call_tool(AGENT_TOOL, {"request": "Say hello"})
        second = await session.call_tool(AGENT_TOOL, {"request": "Say hello again"})
    assert loads == ["openai:gpt-4o-mini"]
    assert not first.isError and texts(first) == ["Hello!"], texts(first)
    assert not second.isError and texts(second) == ["Hello again!"], texts(second)
