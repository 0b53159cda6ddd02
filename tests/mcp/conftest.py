"""The MCP server as a client meets it: `hugginggpt mcp` in its own process (stdio or HTTP), tiny local
task models named with --local-model (real inference, offline), and an allowed folder with an image."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.live import free_port, spawned_server

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[2]
#: The tiny models the server gets (tests/tiny_models.py): a captioner and a speech synthesiser.
TASKS = ("image-to-text", "text-to-speech")


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict[str, Path]:
    """An allowed folder holding a real image and a text file named like one, a folder outside it
    with an image, and the server's home (its outputs go there)."""
    from PIL import Image

    base = tmp_path_factory.mktemp("mcp")
    allowed, outside, home = base / "allowed", base / "outside", base / "home"
    for folder in (allowed, outside, home):
        folder.mkdir()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(allowed / "cat.png")
    Image.new("RGB", (32, 32), (40, 40, 200)).save(outside / "secret.png")
    (allowed / "notes.png").write_text("not an image at all")
    (base / "config.toml").write_text("")
    return {"base": base, "allowed": allowed, "outside": outside, "home": home}


@pytest.fixture(scope="module")
def server_command(place) -> tuple[list[str], dict[str, str]]:
    """`python -m hugginggpt.cli.main mcp` with the tiny models and the allowed folder, and its
    environment: offline, no controller configured, outputs under the test's home."""
    pytest.importorskip("torch")
    from tests.tiny_models import tiny_model_path

    args = ["-m", "hugginggpt.cli.main", "mcp", "--execution", "local", "--allow", str(place["allowed"])]
    for task in TASKS:
        args += ["--local-model", f"{task}={tiny_model_path(task)}"]
    env = {key: value for key, value in os.environ.items()
           if key not in ("HUGGINGGPT_LLM", "OPENAI_API_KEY", "HUGGINGGPT_LOCAL_MODELS", "HUGGINGGPT_AGENT",
                          "HUGGINGGPT_TRACE_DIR", "HUGGINGGPT_EXECUTION", "HUGGINGGPT_ENDPOINT")}
    env.update({"HF_HUB_OFFLINE": "1", "HUGGINGGPT_DOWNLOAD_MODELS": "0", "HUGGINGGPT_HOME": str(place["home"]),
                "HUGGINGGPT_CONFIG": str(place["base"] / "config.toml"),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    return args, env


@pytest.fixture(scope="module")
def http_server(server_command, place) -> Iterator[str]:
    """`hugginggpt mcp --http` on a free loopback port; yields the endpoint's URL."""

    args, env = server_command
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, *args, "--http", "--port", str(port)]
    with spawned_server("hugginggpt mcp --http", command, url, lambda answer: True,  # any answer: it listens
                        log_path=place["base"] / f"http-{port}.log", seconds=120, env=env, cwd=ROOT, poll_s=0.3):
        yield url


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


@pytest.fixture
def settings(monkeypatch, place):
    """In-process settings: the tiny local models of TASKS, no controller, runs under the module's home."""
    pytest.importorskip("torch")
    from hugginggpt.config import load_settings
    from tests.tiny_models import tiny_model_path

    for var in ("HUGGINGGPT_LLM", "OPENAI_API_KEY", "HUGGINGGPT_LOCAL_MODELS", "HUGGINGGPT_AGENT", "HUGGINGGPT_TRACE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(place["base"] / "config.toml"))
    monkeypatch.setenv("HUGGINGGPT_DOWNLOAD_MODELS", "0")
    models = ",".join(f"{task}={tiny_model_path(task)}" for task in TASKS)
    return load_settings(execution="local", local_models=models, trace_dir=str(place["home"]))
