"""Every benchmark script still runs: each one's ``--quick`` mode (seconds, figures meaningless) ends
well and writes its JSON. The figures themselves are measured by hand (docs/results/benchmarks)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.shared import REPO, gguf_or_skip, shared_path

BENCHMARKS = REPO / "benchmarks"
QUICK_RESULTS = BENCHMARKS / "results" / "quick"
SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("*.py") if not path.name.startswith("_"))
#: Their quick runs load the smallest shared GGUF (one llama.cpp model at a time: the slow tests).
NEEDS_GGUF = {"compute_thread", "planning_quality", "prompt_cache"}
#: Their quick runs read the TaskBench sample of the shared folder.
NEEDS_TASKBENCH = {"compare_concurrency", "language_gap", "paired_scores", "parallel_efficiency", "planning_quality",
                   "revalidate"}


def test_every_script_is_listed():
    assert {"orchestration_overhead", "agent_latency"} <= set(SCRIPTS)
    assert NEEDS_GGUF | NEEDS_TASKBENCH <= set(SCRIPTS)


@pytest.mark.parametrize("script", [pytest.param(name, marks=pytest.mark.slow) if name in NEEDS_GGUF else name
                                    for name in SCRIPTS])
def test_quick_run_completes_and_writes_its_json(script):
    if script in NEEDS_GGUF:
        gguf_or_skip("smollm2-135m")
    if script in NEEDS_TASKBENCH and not shared_path("taskbench", "data.json").is_file():
        pytest.skip("the shared TaskBench sample is not here")
    started = time.time()
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), "--quick"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    written = [path for path in QUICK_RESULTS.glob("*.json") if path.stat().st_mtime >= started - 1
               and path.stem.startswith(script)]
    assert written, f"{script} --quick wrote no JSON under {QUICK_RESULTS}"
    for path in written:
        assert json.loads(path.read_text(encoding="utf-8"))["quick"] is True
