"""`hugginggpt run` under HF_HUB_OFFLINE=1 with the user's own inference server (``--endpoint``):
offline means "not the Hub", so the named server is asked; without one, the answer says what to do.

The controller is a local OpenAI-compatible stand-in (tests/openai_server.py), the task server the
Inference API stand-in (tests/inference_server.py), run as a user runs the command: a new process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.inference_server import InferenceServer, _image_to_text
from tests.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "example.jpg"


def hugginggpt_run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    (folder / "config.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUGGINGGPT_", "OPENAI_", "HF_"))}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(folder / "hf-home"), HUGGINGGPT_HOME=str(folder / "runs"),
               HUGGINGGPT_CONFIG=str(folder / "config.toml"))
    return subprocess.run([sys.executable, "-m", "hugginggpt", "run", *args, "--json", "-q"], cwd=folder,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def folder(tmp_path) -> Path:
    shutil.copy(EXAMPLE, tmp_path / "example.jpg")
    return tmp_path


def test_offline_mode_runs_tasks_on_the_users_own_server(folder):
    with OpenAIServer() as llm, InferenceServer() as tasks:
        done = hugginggpt_run(folder, "Describe example.jpg", "--file", "example.jpg", "--llm", "openai:stand-in",
                              "--base-url", llm.url, "--endpoint", f"{tasks.url}/image-to-text")
        asked = [request["path"] for request in tasks.requests]
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    (result,) = output["results"].values()
    assert result["status"] == "ok" and result["result"]["ran"]["backend"] == "remote"
    assert result["result"]["text"] == _image_to_text(EXAMPLE.read_bytes(), {})[0]["generated_text"]
    assert asked == ["/image-to-text"] and output["status"] == "ok"


def test_offline_mode_without_a_server_says_what_to_unset_and_exits_3(folder):
    with OpenAIServer() as llm:
        done = hugginggpt_run(folder, "Describe example.jpg", "--file", "example.jpg", "--llm", "openai:stand-in",
                              "--base-url", llm.url, "--execution", "remote")
    assert done.returncode == 3, done.stderr
    output = json.loads(done.stdout)
    (result,) = output["results"].values()
    assert result["status"] == "failed" and output["status"] == "failed"
    assert "HF_HUB_OFFLINE=1 turns Hugging Face's hosted inference off (unset it, or give your own server with " \
           "--endpoint URL)" in result["error"]
    assert output["output"].startswith("I could not complete the request: no task produced a result.")
