"""Fixtures of the server tests: real uvicorn servers (see ``live.py``) on the agent tests' local tools,
serving any of the three agents on one shared controller (``RequestEchoLLM``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from PIL import Image  # noqa: E402

from hugginggpt.agent import FunctionCallingAgent, GlobalPlanAgent, ReActAgent  # noqa: E402
from hugginggpt.server import ServerSettings, create_app  # noqa: E402
from hugginggpt.server.agents import AgentPool  # noqa: E402
from tests.agent.conftest import Card, Recorder, SleepArgs, catalog_of, make_tools  # noqa: E402
from tests.server.live import LiveServer, RequestEchoLLM  # noqa: E402


def png(path: Path, color=(220, 10, 10)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), color).save(path)
    return path


def nap_tool(recorder: Recorder) -> StructuredTool:
    """A sync tool that blocks the thread it runs in (as the real tasks' models do), recorded when done."""

    def nap(seconds: float, config: RunnableConfig) -> dict[str, Any]:
        time.sleep(seconds)
        recorder.record("nap", {"seconds": seconds}, config)
        return {"text": f"napped {seconds}"}

    return StructuredTool.from_function(nap, name="nap", description="Wait in a thread.", args_schema=SleepArgs)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_server(tmp_path, recorder) -> Iterator[Callable[..., LiveServer]]:
    """Start servers with settings overrides; all are stopped at the end of the test.

    ``agents``: the agents served (``global``, ``react``, ``tools``), all on one controller (``llm``,
    default a ``RequestEchoLLM``, kept as ``server.llm``) and the same tools; the first is the default.
    """
    started: list[LiveServer] = []

    def start(llm: BaseChatModel | None = None, *, agents: tuple[str, ...] = ("global",), **overrides: Any) -> LiveServer:
        llm = llm or RequestEchoLLM()
        tools = make_tools(recorder)
        chosen = [tools[n] for n in ("image-to-text", "text-to-speech", "sleep")] + [nap_tool(recorder)]
        catalog = catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)])
        build = {"global": lambda: GlobalPlanAgent(llm, chosen, catalog),
                 "react": lambda: ReActAgent(llm, chosen),
                 "tools": lambda: FunctionCallingAgent(llm, chosen)}
        pool = AgentPool({name: build[name]() for name in agents}, default=agents[0])
        settings = ServerSettings(**{"runs_dir": tmp_path / f"runs-{len(started)}", **overrides})
        server = LiveServer(create_app(settings, pool)).__enter__()
        server.settings = settings
        server.llm = llm
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)
