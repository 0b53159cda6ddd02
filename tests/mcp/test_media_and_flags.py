"""How produced media comes back (MCP audio content, an embedded resource, or the path only), tools
loaded into LangChain with langchain-mcp-adapters' load_mcp_tools on a live session, and the flags'
one-line errors before anything loads."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from hugginggpt.cli.main import main
from tests.mcp.conftest import texts

pytest.importorskip("mcp")


@pytest.mark.parametrize("audio_as", ["audio", "resource", "path"])
async def test_audio_comes_back_as_asked_and_always_with_its_path(settings, place, audio_as):
    from mcp.shared.memory import create_connected_server_and_client_session

    from hugginggpt.mcp import HuggingGPTMCP

    app = HuggingGPTMCP(settings, allow=[place["allowed"]], audio_as=audio_as)
    async with create_connected_server_and_client_session(app.server()) as session:
        result = await session.call_tool("text-to-speech", {"text": "hello"})
    assert not result.isError, texts(result)
    wav = Path(result.structuredContent["audio"])
    assert f"audio file: {wav}" in texts(result)
    kinds = [block.type for block in result.content]
    if audio_as == "audio":
        assert kinds == ["text", "audio", "text"]
        assert base64.b64decode(result.content[1].data) == wav.read_bytes()
    elif audio_as == "resource":
        assert kinds == ["text", "resource", "text"]
        resource = result.content[1].resource
        assert resource.mimeType.startswith("audio/") and str(resource.uri) == wav.as_uri()
        assert base64.b64decode(resource.blob) == wav.read_bytes()
    else:
        assert kinds == ["text", "text"]


async def test_load_mcp_tools_on_a_session_gives_langchain_tools_that_run(settings, place):
    """langchain-mcp-adapters 0.3 cannot convert MCP audio content; with --audio-as resource a LangChain
    tool gets the audio as a file block, and its path in the text."""
    from langchain_mcp_adapters.tools import load_mcp_tools
    from mcp.shared.memory import create_connected_server_and_client_session

    from hugginggpt.mcp import HuggingGPTMCP

    app = HuggingGPTMCP(settings, allow=[place["allowed"]], audio_as="resource")
    async with create_connected_server_and_client_session(app.server()) as session:
        tools = {tool.name: tool for tool in await load_mcp_tools(session)}
        message = await tools["text-to-speech"].ainvoke(
            {"type": "tool_call", "name": "text-to-speech", "args": {"text": "hello"}, "id": "call-1"})
        refused = await tools["image-to-text"].ainvoke(
            {"type": "tool_call", "name": "image-to-text", "args": {"image": "/etc/passwd"}, "id": "call-2"})
    assert message.status == "success"
    blocks = message.content
    assert [block["type"] for block in blocks] == ["text", "file", "text"]
    wav = Path(message.artifact["structured_content"]["audio"])
    assert blocks[2]["text"] == f"audio file: {wav}" and wav.is_file()
    assert refused.status == "error" and "argument 'image': path escapes the allowed folders" in str(refused.content)


@pytest.mark.parametrize(("argv", "message"), [
    (["--allow", "/no/such/folder"], "--allow /no/such/folder: no such file or folder"),
    (["--http", "--port", "0"], "--port must be between 1 and 65535, got 0"),
    (["--http", "--path", "mcp"], "--path must start with '/'"),
    (["--local-model", "image-to-text=/no/such/model"], "--local-model image-to-text=/no/such/model: no such folder"),
])
def test_bad_flags_are_one_line_before_anything_loads(argv, message, capsys, monkeypatch, place):
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(place["base"] / "config.toml"))
    assert main(["mcp", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hugginggpt: error: ") and message in err and len(err.strip().splitlines()) == 1
