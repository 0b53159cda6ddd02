"""`hugginggpt models pull` against a local stand-in of the Hub (HF_ENDPOINT), with download progress on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hub_server import HubServer

GGUF = b"GGUF" + bytes(range(200)) * 50
CONFIG = json.dumps({"architectures": ["BartForConditionalGeneration"], "model_type": "bart"}).encode()
WEIGHTS = b"\x00" * 4096
REPOS = {
    "Qwen/Qwen2.5-0.5B-Instruct-GGUF": {"qwen2.5-0.5b-instruct-q4_k_m.gguf": GGUF, "other-q8_0.gguf": b"GGUF-big"},
    "facebook/bart-large-cnn": {"config.json": CONFIG, "model.safetensors": WEIGHTS, "pytorch_model.bin": WEIGHTS,
                                "model.onnx": WEIGHTS},
}


@pytest.fixture
def hub():
    with HubServer(REPOS) as server:
        yield server


def pull(hub: HubServer, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "hub-cache"),
           "HF_HOME": str(tmp_path / "hf-home"), "TQDM_POSITION": "-1"}  # bars on although stderr is a pipe
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    return subprocess.run([sys.executable, "-m", "hugginggpt.cli.main", "models", "pull", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_pull_a_task_downloads_its_top_model_with_progress(hub, tmp_path):
    done = pull(hub, tmp_path, "summarization")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip().splitlines()[-1])
    assert (folder / "config.json").read_bytes() == CONFIG
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert not (folder / "pytorch_model.bin").exists() and not (folder / "model.onnx").exists()
    assert tmp_path / "hub-cache" in folder.parents
    assert "100%" in done.stderr  # huggingface_hub's download bar, on stderr


def test_pull_a_gguf_card_fetches_only_its_file(hub, tmp_path):
    done = pull(hub, tmp_path, "Qwen/Qwen2.5-0.5B-Instruct-GGUF")
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip().splitlines()[-1])
    assert path.name == "qwen2.5-0.5b-instruct-q4_k_m.gguf" and path.read_bytes() == GGUF
    assert not (path.parent / "other-q8_0.gguf").exists()
    assert "qwen2.5-0.5b-instruct-q4_k_m.gguf" in done.stderr and "100%" in done.stderr
    again = pull(hub, tmp_path, "Qwen/Qwen2.5-0.5B-Instruct-GGUF")  # cached: the same file, no new GET
    gets = [path for method, path in hub.requests if method == "GET" and path.endswith(".gguf")]
    assert again.returncode == 0 and Path(again.stdout.strip()) == path and len(gets) == 1


def test_pull_a_gguf_file_spec(hub, tmp_path):
    done = pull(hub, tmp_path, "gguf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/other-q8_0.gguf")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip().splitlines()[-1]).read_bytes() == b"GGUF-big"


def test_pull_errors_are_one_line(hub, tmp_path):
    missing = pull(hub, tmp_path, "nobody/nothing")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1].startswith("hugginggpt: error: cannot download nobody/nothing")
    bad = pull(hub, tmp_path, "no such thing")
    assert bad.returncode == 1 and "neither a task" in bad.stderr
