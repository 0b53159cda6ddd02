"""`hugginggpt mcp --http`: the same tools over streamable HTTP on 127.0.0.1, through the SDK's client and
through a LangChain agent whose tools langchain-mcp-adapters loads from the server."""

from __future__ import annotations

import anyio
import pytest
from pydantic import Field

from tests.mcp.conftest import texts

pytest.importorskip("mcp")


async def test_http_lists_and_runs_a_tool_and_refuses_a_file_outside_the_allowed_folders(http_server, place):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    from hugginggpt.mcp import AGENT_TOOL

    with anyio.fail_after(180):
        async with streamablehttp_client(http_server) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"image-to-text", "text-to-speech", AGENT_TOOL} <= names
            caption = await session.call_tool("image-to-text", {"image": str(place["allowed"] / "cat.png")})
            assert not caption.isError, texts(caption)
            assert caption.structuredContent["text"].strip()
            refused = await session.call_tool("image-to-text", {"image": str(place["outside"] / "secret.png")})
            assert refused.isError and "argument 'image': path escapes the allowed folders" in texts(refused)[0]


def test_http_refuses_a_foreign_host_header(http_server):
    """DNS rebinding: a page on another name that resolves to 127.0.0.1 gets no answer from the tools."""
    import httpx

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream", "Host": "evil.example"}
    response = httpx.post(http_server, json=body, headers=headers, timeout=10)
    assert response.status_code in (403, 421)


async def test_a_langchain_agent_loads_the_tools_through_the_mcp_adapters_and_calls_one(http_server, place):
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import (
        FakeMessagesListChatModel,
    )
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_mcp_adapters.client import MultiServerMCPClient

    class ToolCallingModel(FakeMessagesListChatModel):
        """Scripted answers; remembers the tools it was bound to."""

        bound: list = Field(default_factory=list)

        def bind_tools(self, tools, **kwargs):
            self.bound = list(tools)
            return self

    client = MultiServerMCPClient({"hugginggpt": {"transport": "streamable_http", "url": http_server}})
    with anyio.fail_after(180):
        tools = await client.get_tools()
        by_name = {tool.name: tool for tool in tools}
        assert by_name["image-to-text"].args_schema["properties"]["image"]["type"] == "string"
        image = str(place["allowed"] / "cat.png")
        model = ToolCallingModel(responses=[
            AIMessage("", tool_calls=[{"name": "image-to-text", "args": {"image": image}, "id": "c1", "type": "tool_call"}]),
            AIMessage("", tool_calls=[{"name": "image-to-text", "args": {"image": str(place["outside"] / "secret.png")},
                                       "id": "c2", "type": "tool_call"}]),
            AIMessage("It is a picture."),
        ])
        agent = create_agent(model, tools=[by_name["image-to-text"]])
        state = await agent.ainvoke({"messages": [("user", "Describe cat.png")]})
    assert [tool.name for tool in model.bound] == ["image-to-text"]
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == 2
    ok, refused = results
    assert ok.status == "success" and "text: " in str(ok.content)
    assert ok.artifact["structured_content"]["ran"]["backend"] == "local"
    assert refused.status == "error" and "path escapes the allowed folders" in str(refused.content)
    assert state["messages"][-1].content == "It is a picture."
