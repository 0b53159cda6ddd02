"""The real-request set: its rows load, its split is fixed by rule, and plans are scored by task list and edges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.errors import DatasetError
from hugginggpt.eval.real_requests import load_real_requests, score_plans, select_split, split_ids

SET = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "real_requests.jsonl"

CHAIN = [{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "a.wav"}},
         {"task": "summarization", "id": 1, "args": {"text": "<resource>-0"}},
         {"task": "translation", "id": 2, "args": {"text": "<resource>-0"}}]


def test_the_same_plan_scores_one_everywhere_and_an_empty_plan_zero():
    gold = {"r1": CHAIN, "r2": []}
    assert score_plans(gold, {"r1": CHAIN, "r2": []}) == {"requests": 2, "exact": 1.0, "n_f1": 1.0, "e_f1": 1.0}
    scores = score_plans(gold, {})
    assert scores["exact"] == 0.5 and scores["n_f1"] == 0.0 and scores["e_f1"] == 0.0


def test_task_order_does_not_matter_but_edges_do():
    reordered = [CHAIN[2] | {"id": 0, "args": {"text": "<resource>-2"}},
                 CHAIN[1] | {"id": 1, "args": {"text": "<resource>-2"}},
                 CHAIN[0] | {"id": 2}]
    assert score_plans({"r": CHAIN}, {"r": reordered})["exact"] == 1.0
    assert score_plans({"r": CHAIN}, {"r": reordered})["e_f1"] == 1.0
    rewired = [CHAIN[0], CHAIN[1], CHAIN[2] | {"args": {"text": "<resource>-1"}}]  # translates the summary
    scores = score_plans({"r": CHAIN}, {"r": rewired})
    assert scores["exact"] == 1.0 and scores["n_f1"] == 1.0 and scores["e_f1"] == 0.5


def test_an_extra_task_breaks_the_exact_list():
    extra = [*CHAIN, {"task": "text-to-speech", "id": 3, "args": {"text": "<resource>-2"}}]
    scores = score_plans({"r": CHAIN}, {"r": extra})
    assert scores["exact"] == 0.0 and scores["n_f1"] == pytest.approx(6 / 7, abs=1e-4)


def test_a_malformed_row_names_its_line(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "a", "request": "hi", "plan": []}) + "\n{\"id\": \"b\"}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"set.jsonl:2"):
        load_real_requests(path)


def test_the_shipped_set_is_split_by_rule_into_disjoint_halves_per_language_group():
    requests = load_real_requests(SET)
    parts = split_ids(requests)
    assert set(parts["dev"]).isdisjoint(parts["test"])
    assert sorted(parts["dev"] + parts["test"]) == sorted(r.id for r in requests)
    assert len(parts["test"]) >= 60 and len(parts["dev"]) >= 50
    for group in ("en", "other"):
        members = [r for r in requests if r.group == group]
        in_test = [r for r in members if r.id in parts["test"]]
        assert abs(len(in_test) - len(members) / 2) <= 1
    assert [r.id for r in select_split(requests, "test")] == [r.id for r in requests if r.id in parts["test"]]
    reversed_parts = split_ids(list(reversed(requests)))  # the rule does not depend on file order
    assert {k: set(v) for k, v in reversed_parts.items()} == {k: set(v) for k, v in parts.items()}
