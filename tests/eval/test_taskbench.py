"""Loading TaskBench folders in their real shapes: upstream and fork field names, JSON strings, bad rows."""

from __future__ import annotations

import json

import pytest

from hugginggpt.errors import DatasetError
from hugginggpt.eval.taskbench import load_taskbench

from .conftest import write_domain


def _row(**fields) -> str:
    return json.dumps(fields)


def test_loads_the_shared_sample_with_official_requests(taskbench):
    assert len(taskbench.records) == 523
    assert {s.type for s in taskbench} == {"single", "chain", "dag"}
    sample = taskbench.get("33446682")
    # the official request text, not the fork's paraphrased `instruction`
    assert sample.request.startswith("I have an audio file 'example.wav'")
    assert sample.nodes == [{"task": "Automatic Speech Recognition", "arguments": ["example.wav"]}]
    assert len(taskbench.tools) == 23
    assert taskbench.tool_links


def test_malformed_samples_are_reported_not_fatal(taskbench):
    assert any("17353313" in p and "task_nodes is dict" in p for p in taskbench.problems)
    assert all(s.id != "17353313" for s in taskbench)
    assert len(taskbench.samples) + len(taskbench.problems) == 523


def test_upstream_field_names_and_json_strings(tmp_path):
    root = write_domain(tmp_path / "d", [
        _row(id=1, user_request="Make a picture of a cat and describe it.", type="chain", n_tools=2,
             tool_nodes=json.dumps([{"task": "Text-to-Image", "arguments": ["a cat"]},
                                    {"task": "Image Classification", "arguments": ["<node-0>"]}]),
             tool_links=json.dumps([{"source": "Text-to-Image", "target": "Image Classification"}]),
             tool_steps=["Step 1", "Step 2"]),
    ])
    sample = load_taskbench(root).samples[0]
    assert sample.id == "1" and sample.type == "chain" and sample.n_tools == 2
    assert sample.request == "Make a picture of a cat and describe it."
    assert sample.links == [{"source": "Text-to-Image", "target": "Image Classification"}]
    assert sample.steps == ["Step 1", "Step 2"]


def test_official_requests_win_and_instruction_is_the_fallback(tmp_path):
    nodes = [{"task": "Text-to-Speech", "arguments": "hello"}]  # one string instead of a list
    root = write_domain(
        tmp_path / "d",
        [_row(id="a", instruction="paraphrase A", task_nodes=nodes),
         _row(id="b", instruction="paraphrase B", task_nodes=nodes)],
        requests=[_row(id="a", user_request="official A")],
    )
    data = load_taskbench(root)
    assert [s.request for s in data] == ["official A", "paraphrase B"]
    assert data.samples[0].nodes[0]["arguments"] == ["hello"]
    assert data.samples[0].type == "single"  # inferred when the row has none


def test_bad_lines_are_problems(tmp_path):
    root = write_domain(tmp_path / "d", [
        "{not json",
        _row(id="x", instruction="no nodes", task_nodes=[]),
        _row(id="y", instruction="ok", task_nodes=[{"task": "Text-to-Image", "arguments": ["a"]}]),
    ])
    data = load_taskbench(root)
    assert [s.id for s in data] == ["y"]
    assert len(data.problems) == 2 and "line 1" in data.problems[0] and "no task nodes" in data.problems[1]


def test_select_by_type_limit_and_seed(taskbench):
    dags = taskbench.select(types=["dag"])
    assert dags and all(s.type == "dag" for s in dags)
    first = taskbench.select(limit=5, seed=3)
    assert len(first) == 5 and first == taskbench.select(limit=5, seed=3)
    assert first != taskbench.select(limit=5, seed=4)


def test_missing_folder_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="tool_desc.json not found"):
        load_taskbench(tmp_path)
