"""Relative paths over MCP (issue 26): `--allow data` and a client's `data/cat.png` mean what they mean in
a shell started in the server's working directory; `..` and symlinks never lead out of the allowed
folders, and a symlink that leads into one is followed as a shell would."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from PIL import Image

from hugginggpt.errors import ConfigError
from tests.mcp.conftest import texts

pytest.importorskip("mcp")


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """The server's working directory: ``data/cat.png`` (to allow), ``private/secret.png`` (not allowed),
    symlinks out of ``data`` (a file and a folder) and one into it (``pictures``)."""
    folder = tmp_path / "project"
    for name in ("data", "private"):
        (folder / name).mkdir(parents=True)
    Image.new("RGB", (16, 16), (200, 40, 40)).save(folder / "data" / "cat.png")
    Image.new("RGB", (16, 16), (40, 40, 200)).save(folder / "private" / "secret.png")
    (folder / "data" / "leak.png").symlink_to(folder / "private" / "secret.png")
    (folder / "data" / "out").symlink_to(folder / "private", target_is_directory=True)
    (folder / "pictures").symlink_to(folder / "data", target_is_directory=True)
    monkeypatch.chdir(folder)
    return folder


async def call(app, name: str, arguments: dict) -> object:
    from mcp.shared.memory import create_connected_server_and_client_session

    async with create_connected_server_and_client_session(app.server()) as session:
        return await session.call_tool(name, arguments)


async def captions(app, *images: str) -> dict[str, object]:
    from mcp.shared.memory import create_connected_server_and_client_session

    async with create_connected_server_and_client_session(app.server()) as session:
        return {image: await session.call_tool("image-to-text", {"image": image}) for image in images}


def test_a_relative_allow_is_the_folder_of_that_name_in_the_working_directory(settings, project, tmp_path):
    from hugginggpt.mcp import HuggingGPTMCP

    cat_folder = (project / "data").resolve()
    assert HuggingGPTMCP(settings, allow=["data"], tools=[]).allowed == [cat_folder]
    assert HuggingGPTMCP(settings, allow=["./pictures/../data"], tools=[]).allowed == [cat_folder]
    assert HuggingGPTMCP(settings, allow=["pictures"], tools=[]).allowed == [cat_folder]  # a symlink: its target
    # the server's working directory, when given, is where a relative entry starts
    assert HuggingGPTMCP(settings, allow=["project/data"], tools=[], base=tmp_path).allowed == [cat_folder]
    with pytest.raises(ConfigError, match="--allow nope: no such file or folder"):
        HuggingGPTMCP(settings, allow=["nope"], tools=[])


@pytest.mark.parametrize("allow", ["data", "./data", "ABSOLUTE"])
async def test_a_client_path_means_what_it_means_in_a_shell_in_the_servers_directory(settings, project, allow):
    from hugginggpt.mcp import HuggingGPTMCP

    app = HuggingGPTMCP(settings, allow=[str(project / "data") if allow == "ABSOLUTE" else allow])
    # from the working directory, through a symlink into the allowed folder, relative to the allowed
    # folder itself, or absolute: the same file
    found = await captions(app, "data/cat.png", "./data/cat.png", "pictures/cat.png", "cat.png",
                           str(project / "data" / "cat.png"))
    for image, result in found.items():
        assert not result.isError, (image, texts(result))
        assert result.structuredContent["text"].strip() and result.structuredContent["ran"]["backend"] == "local"


async def test_dot_dot_and_symlinks_do_not_lead_out_of_the_allowed_folders(settings, project):
    from hugginggpt.mcp import HuggingGPTMCP

    app = HuggingGPTMCP(settings, allow=["data"])
    refused = await captions(app, "private/secret.png", "data/../private/secret.png", "../project/private/secret.png",
                             "data/leak.png", "data/out/secret.png", "leak.png", str(project / "private" / "secret.png"),
                             "data")
    errors = {image: texts(result)[0] for image, result in refused.items() if result.isError}
    assert set(errors) == set(refused)
    # a plain name outside every allowed place: not found, as a missing file (whether it exists is not said)
    assert errors["private/secret.png"] == "image-to-text: argument 'image': file not found: private/secret.png"
    for image in ("data/../private/secret.png", "../project/private/secret.png", "data/leak.png", "data/out/secret.png",
                  "leak.png", str(project / "private" / "secret.png")):
        assert errors[image] == f"image-to-text: argument 'image': path escapes the allowed folders: {image}"
    assert errors["data"] == "image-to-text: argument 'image': not a regular file: data"


async def test_the_agent_tools_files_are_confined_the_same_way(settings, project):
    """A file the client names relative to the server's directory passes (the call then stops at the
    missing controller); one outside is refused naming ``files``, before any model loads."""
    from hugginggpt.mcp import AGENT_TOOL, HuggingGPTMCP

    app = HuggingGPTMCP(settings, allow=["data"])
    given = await call(app, AGENT_TOOL, {"request": "Describe the cat", "files": ["data/cat.png"]})
    outside = await call(app, AGENT_TOOL, {"request": "Describe it", "files": ["data/out/secret.png"]})
    assert given.isError and "needs a controller LLM" in texts(given)[0]
    assert texts(outside) == [f"{AGENT_TOOL}: argument 'files': path escapes the allowed folders: data/out/secret.png"]


async def test_hugginggpt_mcp_started_in_a_folder_with_a_relative_allow(server_command, project, place):
    """The command itself, over stdio, started in the project with ``--allow data``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args, env = server_command
    args = [*args[:args.index("--allow")], "--allow", "data", *args[args.index("--allow") + 2:]]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(project))
    with (place["base"] / "stdio-relative.log").open("w") as log, anyio.fail_after(240):
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            caption = await session.call_tool("image-to-text", {"image": "data/cat.png"})
            escape = await session.call_tool("image-to-text", {"image": "data/leak.png"})
    assert not caption.isError, texts(caption)
    assert caption.structuredContent["text"].strip() and caption.structuredContent["ran"]["backend"] == "local"
    assert escape.isError and texts(escape)[0].endswith("path escapes the allowed folders: data/leak.png")
