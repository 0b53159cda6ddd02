"""The README's offline first run, as written there, as a new user runs it: the models come from the
Hub (``hf download``, ``hugginggpt models pull``), then the request runs with ``HF_HUB_OFFLINE=1``.

The Hub here is a local stand-in (``tests/hub_server.py``, through ``HF_ENDPOINT``) that serves the
real files a user gets: Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF's q4_k_m file and
sentence-transformers/all-MiniLM-L6-v2, both fetched by ../shared/models (the same bytes as the
Hub's: the GGUF's sha256 is the Hub's). The Hugging Face cache is a fresh folder. The block between
the ``offline-first-run`` markers in README.md is run by bash from the repository root (``--json``
added to its last line, so the test can read what the tasks produced). The answer must state the
similarity score that the sentence-similarity task really produced.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import shutil
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from hugginggpt.config import EMBEDDED_DEFAULT_LLM
from tests.hub_server import HubServer
from tests.shared import REPO, gguf_or_skip, model_or_skip

START = "<!-- offline-first-run"
END = "<!-- /offline-first-run -->"


def readme_block() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(START, 1)[1].split(END, 1)[0]
    return section.split("```bash\n", 1)[1].split("```", 1)[0].strip()


#: The default controller's Hub repo and file, and the sentence-similarity model's repo.
GGUF_REPO, GGUF_FILE = EMBEDDED_DEFAULT_LLM.removeprefix("gguf:").rsplit("/", 1)
MINILM_REPO = "sentence-transformers/all-MiniLM-L6-v2"


def test_the_readme_block_is_what_the_test_runs():
    block = readme_block()
    assert f"hf download {GGUF_REPO} {GGUF_FILE}" in block  # the default controller's file, from the Hub
    assert f"hugginggpt models pull {MINILM_REPO}" in block
    assert "../shared" not in block and "--llm" not in block  # a user's commands: the default controller
    assert block.splitlines()[-1].startswith("HF_HUB_OFFLINE=1 hugginggpt run ") and block.endswith("--execution local")


def hub_files(gguf: Path, minilm: Path, stack: ExitStack) -> dict[str, dict[str, Any]]:
    """The two repos as the Hub serves them: the GGUF mapped from disk (1.1 GB), MiniLM's folder."""
    handle = stack.enter_context(gguf.open("rb"))
    data = stack.enter_context(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
    folder = {str(path.relative_to(minilm)): path.read_bytes() for path in sorted(minilm.rglob("*")) if path.is_file()}
    return {GGUF_REPO: {GGUF_FILE: data}, MINILM_REPO: folder}


def _results(output: dict[str, Any]) -> list[dict[str, Any]]:
    results = output.get("results")
    if isinstance(results, dict):
        results = list(results.values())
    return [r for r in results or [] if isinstance(r, dict)]


def _similarity_scores(output: dict[str, Any]) -> list[float]:
    """The numbers the sentence-similarity task produced (its envelope's data)."""
    found: list[float] = []

    def walk(value: Any) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            found.append(float(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for outcome in _results(output):
        task = outcome.get("task") or (outcome.get("call") or {}).get("task")
        envelope = outcome.get("result") if isinstance(outcome.get("result"), dict) else outcome
        if task == "sentence-similarity" and outcome.get("status", "ok") in ("ok", "succeeded", "success"):
            walk(envelope.get("data"))
    return found


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_offline_first_run_answers_with_the_real_score(tmp_path):
    gguf = Path(gguf_or_skip("qwen2.5-coder-1.5b"))  # fetched (or skipped) before the timed run
    minilm = model_or_skip("all-minilm-l6-v2")
    for command in ("hugginggpt", "hf"):
        if shutil.which(command) is None:
            pytest.skip(f"the {command} command is not installed (pip install -e .)")
    script = readme_block() + " --json"
    with ExitStack() as stack:
        hub = stack.enter_context(HubServer(hub_files(gguf, minilm, stack)))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HUGGINGGPT_", "OPENAI_", "HF_"))}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), HUGGINGGPT_HOME=str(tmp_path / "runs"),
                   HUGGINGGPT_CONFIG=str(tmp_path / "config.toml"), HF_HUB_DISABLE_PROGRESS_BARS="1")
        (tmp_path / "config.toml").write_text("")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=REPO, capture_output=True, text=True,
                              env=env, timeout=3000)
        fetched = [path for method, path in hub.requests if method == "GET" and "/resolve/" in path]
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"/{GGUF_REPO}/resolve/main/{GGUF_FILE}" in fetched  # from the Hub, once, before the offline run
    assert (tmp_path / "hf-home" / "hub" / f"models--{GGUF_REPO.replace('/', '--')}").is_dir()
    # stdout: the paths the two downloads print, then the run's JSON
    output = json.loads(done.stdout[done.stdout.index("\n{\n") + 1:])
    scores = _similarity_scores(output)
    assert scores, f"the similarity task produced no score: {json.dumps(_results(output))[:2000]}"
    answer = str(output["output"])
    # A number in the answer is the score when it is the score rounded to the digits it shows, as a
    # fraction (0.62) or a percentage (62.3%: how the model writes it varies with the CPU's tokens).
    stated = [(float(number) / (100 if percent else 1), len(digits) + (2 if percent else 0))
              for number, digits, percent in re.findall(r"(-?\d+(?:\.(\d+))?)\s*(%?)", answer) if digits or percent]
    assert any(abs(score - value) <= 0.5 * 10 ** -places for score in scores for value, places in stated), (answer, scores)
