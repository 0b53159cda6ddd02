"""The fixed dev/test split: deterministic, stratified, disjoint, and the same as the file in the repo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.splits import hash_fraction, select_split, split_document, split_ids, split_key
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchSample

SPLIT_FILE = Path(__file__).resolve().parents[2] / "docs" / "results" / "splits" / "taskbench-huggingface.json"


def _samples(n_per_type: int) -> list[TaskBenchSample]:
    return [TaskBenchSample(id=f"{t}{i}", request="r", type=t, n_tools=1, nodes=[], links=[])
            for t in GRAPH_TYPES for i in range(n_per_type)]


def test_split_is_stratified_disjoint_and_independent_of_order():
    samples = _samples(10)
    ids = split_ids(samples)
    assert set(ids["dev"]).isdisjoint(ids["test"]) and len(ids["dev"]) + len(ids["test"]) == 30
    by_id = {s.id: s for s in samples}
    assert [sum(by_id[i].type == t for i in ids["test"]) for t in GRAPH_TYPES] == [3, 3, 3]  # ceil(0.3 * 10)
    assert split_ids(list(reversed(samples))) == {k: sorted(v, key=lambda i: (GRAPH_TYPES.index(by_id[i].type),
                                                                               split_key(i))) for k, v in ids.items()}
    assert [s.id for s in select_split(samples, "test")] == [s.id for s in samples if s.id in ids["test"]]
    assert select_split(samples, "all") == samples
    with pytest.raises(HuggingGPTError, match="--split"):
        select_split(samples, "train")


def test_hash_fraction_places_each_key_alone_and_about_half_below_one_half():
    keys = [f"k{i}" for i in range(1000)]
    fractions = [hash_fraction(k, "salt:") for k in keys]
    assert all(0 <= f < 1 for f in fractions)
    assert fractions == [hash_fraction(k, "salt:") for k in keys]
    assert fractions != [hash_fraction(k, "other salt:") for k in keys]
    assert 430 <= sum(f < 0.5 for f in fractions) <= 570


def test_the_split_file_in_the_repository_is_what_the_rule_gives(taskbench):
    written = json.loads(SPLIT_FILE.read_text())
    made = split_document(taskbench.samples, written["source"])
    assert written == made
    assert len(written["test"]) >= 150
    assert all(made["counts"]["test"][t] > 0 for t in GRAPH_TYPES)


def test_no_demonstration_comes_from_a_taskbench_request(taskbench):
    from hugginggpt.prompts import load_demonstrations

    requests = {" ".join(s.request.lower().split()) for s in taskbench.samples}
    for demo in load_demonstrations():
        assert " ".join(demo["input"].lower().split()) not in requests
