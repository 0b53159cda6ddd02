"""The README's offline first run, as written there, on the real models from ../shared.

The block between the ``offline-first-run`` markers in README.md is run by bash from the repository
root (``--json`` added to its last line, so the test can read what the tasks produced). The answer
must state the similarity score that the sentence-similarity task really produced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from typing import Any

import pytest

from tests.shared import REPO, gguf_or_skip, model_or_skip

START = "<!-- offline-first-run"
END = "<!-- /offline-first-run -->"


def readme_block() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(START, 1)[1].split(END, 1)[0]
    return section.split("```bash\n", 1)[1].split("```", 1)[0].strip()


def test_the_readme_block_is_what_the_test_runs():
    block = readme_block()
    assert "fetch-gguf qwen2.5-coder-1.5b" in block and "fetch-model all-minilm-l6-v2" in block
    assert "--local-model sentence-similarity=$MINILM" in block and block.rstrip().endswith("--execution local")


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
    gguf_or_skip("qwen2.5-coder-1.5b")  # fetched (or skipped) before the timed run
    model_or_skip("all-minilm-l6-v2")
    if shutil.which("hugginggpt") is None:
        pytest.skip("the hugginggpt command is not installed (pip install -e .)")
    script = readme_block() + " --json"
    env = {**os.environ, "HUGGINGGPT_HOME": str(tmp_path / "runs")}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=3000)
    assert done.returncode == 0, done.stderr[-3000:]
    output = json.loads(done.stdout)
    scores = _similarity_scores(output)
    assert scores, f"the similarity task produced no score: {json.dumps(_results(output))[:2000]}"
    answer = str(output["output"])
    # A number in the answer is the score when it is the score rounded to the digits it shows, as a
    # fraction (0.62) or a percentage (62.3%: how the model writes it varies with the CPU's tokens).
    stated = [(float(number) / (100 if percent else 1), len(digits) + (2 if percent else 0))
              for number, digits, percent in re.findall(r"(-?\d+(?:\.(\d+))?)\s*(%?)", answer) if digits or percent]
    assert any(abs(score - value) <= 0.5 * 10 ** -places for score in scores for value, places in stated), (answer, scores)
