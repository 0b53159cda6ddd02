"""`hugginggpt mcp` over stdio, driven by the official SDK's client: every task tool listed with the
task table's schema, real tool runs on tiny local models, media back as MCP content plus the path,
and every refusal a tool error (isError) that names the argument."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import anyio
import pytest

from tests.mcp.conftest import ROOT, texts

pytest.importorskip("mcp")


async def test_stdio_lists_the_tools_runs_them_and_refuses_what_is_not_allowed(server_command, place):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from hugginggpt.mcp import AGENT_TOOL, MEDIA_ARG_HINT, mcp_input_schema
    from hugginggpt.tools import build_tools, task_table

    args, env = server_command
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))
    log_path = place["base"] / "stdio.log"
    with log_path.open("w") as log, anyio.fail_after(240):
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            assert info.serverInfo.name == "hugginggpt"

            # every task of the table, with the schema generated from it, and the agent tool
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(listed) == set(task_table()) | {AGENT_TOOL}
            ours = {tool.name: tool for tool in build_tools()}
            for name, tool in ours.items():
                assert listed[name].inputSchema == mcp_input_schema(tool)
                assert listed[name].description == tool.description
            image_arg = listed["image-to-text"].inputSchema["properties"]["image"]
            assert MEDIA_ARG_HINT in image_arg["description"] and "<resource>" not in image_arg["description"]
            assert listed["image-to-text"].inputSchema["required"] == ["image"]
            assert listed["image-to-text"].inputSchema["additionalProperties"] is False
            assert listed[AGENT_TOOL].inputSchema["required"] == ["request"]

            # a real run: the tiny captioner on the allowed image, named relative to the allowed folder
            caption = await session.call_tool("image-to-text", {"image": "cat.png"})
            assert not caption.isError, texts(caption)
            assert caption.structuredContent["text"].strip()
            assert caption.structuredContent["ran"]["backend"] == "local"
            assert texts(caption)[0].startswith("text: ")

            # produced audio: MCP audio content (a real WAV) plus a text naming the file, in the server's folder
            speech = await session.call_tool("text-to-speech", {"text": "hello world"})
            assert not speech.isError, texts(speech)
            audio = [block for block in speech.content if block.type == "audio"]
            assert len(audio) == 1 and audio[0].mimeType in ("audio/wav", "audio/x-wav")
            path = Path(speech.structuredContent["audio"])
            assert base64.b64decode(audio[0].data) == path.read_bytes()
            assert path.read_bytes()[:4] == b"RIFF"
            assert f"audio file: {path}" in texts(speech)
            assert path.is_relative_to(place["home"]) and path.parent.parent.name.startswith("mcp-")

            # refusals: each a tool error naming the argument, before any model reads anything
            outside = await session.call_tool("image-to-text", {"image": str(place["outside"] / "secret.png")})
            assert outside.isError
            refusal = f"image-to-text: argument 'image': path escapes the allowed folders: {place['outside'] / 'secret.png'}"
            assert texts(outside) == [refusal]
            escape = await session.call_tool("image-to-text", {"image": "../outside/secret.png"})
            assert escape.isError and "argument 'image'" in texts(escape)[0] and "escapes" in texts(escape)[0]
            not_media = await session.call_tool("image-to-text", {"image": "notes.png"})
            assert not_media.isError and "argument 'image'" in texts(not_media)[0]
            unknown = await session.call_tool("image-to-text", {"image": "cat.png", "colour": "red"})
            assert unknown.isError and "colour: unknown argument" in texts(unknown)[0]
            missing = await session.call_tool("image-to-text", {})
            assert missing.isError and "image: required argument missing" in texts(missing)[0]
            no_tool = await session.call_tool("no-such-task", {})
            assert no_tool.isError and "unknown tool 'no-such-task'" in texts(no_tool)[0]

            # the agent tool: no controller configured, one line naming the flag (listing never loaded one)
            agent = await session.call_tool(AGENT_TOOL, {"request": "Describe cat.png", "files": ["cat.png"]})
            assert agent.isError and "--llm" in texts(agent)[0]
            agent_outside = await session.call_tool(AGENT_TOOL, {"request": "Describe it",
                                                                 "files": [str(place["outside"] / "secret.png")]})
            assert agent_outside.isError and "argument 'files'" in texts(agent_outside)[0]
    assert "Traceback" not in log_path.read_text()
