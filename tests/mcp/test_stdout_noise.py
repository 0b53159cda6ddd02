"""Over stdio, stdout carries only the protocol: a tool (or a C library under it) that writes to stdout
writes to stderr instead, and the client reads every answer."""

from __future__ import annotations

import os
import sys

import anyio
import pytest

from tests.mcp.conftest import ROOT, texts

pytest.importorskip("mcp")


async def test_writes_to_stdout_during_a_call_go_to_stderr(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tests.mcp.noisy_server", str(tmp_path / "runs")],
                                   env=env, cwd=str(ROOT))
    log_path = tmp_path / "stderr.log"
    with log_path.open("w") as log, anyio.fail_after(120):
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("noisy", {"text": "one"})
            second = await session.call_tool("noisy", {"text": "two"})
    assert not first.isError and texts(first) == ["text: one"]
    assert not second.isError and texts(second) == ["text: two"]
    noise = log_path.read_text()
    assert noise.count("python print on stdout") == 2 and noise.count("C-level write on fd 1") == 2
