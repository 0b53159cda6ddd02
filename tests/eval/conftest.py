"""Shared fixtures of the evaluation tests: the TaskBench sample shipped next to the checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.eval.taskbench import load_taskbench
from tests.shared import shared_path

TASKBENCH_DIR = shared_path("taskbench")


@pytest.fixture(scope="session")
def taskbench_dir() -> Path:
    if not (TASKBENCH_DIR / "data.json").is_file():
        pytest.skip(f"TaskBench sample not found at {TASKBENCH_DIR.resolve()} (it lives outside the repository)")
    return TASKBENCH_DIR.resolve()


@pytest.fixture(scope="session")
def taskbench(taskbench_dir):
    from hugginggpt.eval.taskbench import load_taskbench

    return load_taskbench(taskbench_dir)


TOOLS = {
    "Image Classification": {"id": "Image Classification", "input-type": ["image"], "output-type": ["text"]},
    "Text-to-Image": {"id": "Text-to-Image", "input-type": ["text"], "output-type": ["image"]},
    "Text-to-Speech": {"id": "Text-to-Speech", "input-type": ["text"], "output-type": ["audio"]},
    "Object Detection": {"id": "Object Detection", "input-type": ["image"], "output-type": ["text"]},
}


def write_domain(root: Path, rows: list[str], requests: list[str] | None = None, tools=TOOLS) -> Path:
    """A small TaskBench folder: raw JSONL lines as given (so malformed rows can be tested)."""
    import json

    root.mkdir(parents=True, exist_ok=True)
    (root / "tool_desc.json").write_text(json.dumps({"nodes": list(tools.values())}))
    (root / "graph_desc.json").write_text(json.dumps({"nodes": list(tools.values()), "links": []}))
    (root / "data.json").write_text("\n".join(rows) + "\n")
    if requests is not None:
        (root / "user_requests.json").write_text("\n".join(requests) + "\n")
    return root


@pytest.fixture()
def dataset(tmp_path):
    """Two requests in a TaskBench domain folder: a two-step chain and a single step."""
    rows = [
        json.dumps({"id": "a", "type": "chain", "n_tools": 2, "instruction": "Draw a cat and tell me what it is.",
                    "task_nodes": [{"task": "Text-to-Image", "arguments": ["a cat"]},
                                   {"task": "Image Classification", "arguments": ["<node-0>"]}],
                    "task_links": [{"source": "Text-to-Image", "target": "Image Classification"}]}),
        json.dumps({"id": "b", "type": "single", "n_tools": 1, "instruction": "Say hello out loud.",
                    "task_nodes": [{"task": "Text-to-Speech", "arguments": ["hello"]}], "task_links": []}),
    ]
    return load_taskbench(write_domain(tmp_path / "domain", rows))
