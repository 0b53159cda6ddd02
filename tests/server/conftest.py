"""Fixtures of the server tests: real uvicorn servers (see ``live.py``) on the agent tests' local tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from langchain_core.language_models import BaseChatModel  # noqa: E402
from PIL import Image  # noqa: E402

from hugginggpt.agent import GlobalPlanAgent  # noqa: E402
from hugginggpt.server import ServerSettings, create_app  # noqa: E402
from hugginggpt.server.agents import AgentPool  # noqa: E402
from tests.agent.conftest import Card, Recorder, catalog_of, make_tools  # noqa: E402
from tests.server.live import LiveServer, RequestEchoLLM  # noqa: E402


def png(path: Path, color=(220, 10, 10)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), color).save(path)
    return path


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_server(tmp_path, recorder) -> Iterator[Callable[..., LiveServer]]:
    """Start servers with settings overrides; all are stopped at the end of the test."""
    started: list[LiveServer] = []

    def start(llm: BaseChatModel | None = None, **overrides: Any) -> LiveServer:
        tools = make_tools(recorder)
        catalog = catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)])
        agent = GlobalPlanAgent(llm or RequestEchoLLM(), [tools[n] for n in ("image-to-text", "text-to-speech", "sleep")],
                                catalog)
        settings = ServerSettings(**{"runs_dir": tmp_path / f"runs-{len(started)}", **overrides})
        server = LiveServer(create_app(settings, AgentPool({"global": agent}))).__enter__()
        server.settings = settings
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)
