"""benchmarks/revalidate.py: recorded planner answers validated again, with every repair and without
each switchable one (or several together), scored as TaskBench does, without LLM calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
revalidate = pytest.importorskip("revalidate")

#: Two recorded answers of the 1.5B planner to dev requests whose label is one question-answering:
#: a text-generation on the question (the passage is quoted in the request), and a text-generation
#: nobody asked for next to the question-answering.
ANSWERS = {
    "20496257": '{"tasks": [{"task": "text-generation", "id": 0, "args": {"text": '
                '"What is the main function of mitochondria within the cell?"}}]}',
    "12692212": '{"tasks": [{"task": "text-generation", "id": 0, "args": {"text": "Who is considered the father of '
                'computers?"}}, {"task": "question-answering", "id": 1, "args": {"question": "Who is considered the '
                'father of computers?", "context": "Charles Babbage is known as the father of computers because of his '
                'pioneering work on analytical engines. His innovative ideas laid the groundwork for modern computing."}}]}',
}


def test_each_repair_is_measured_on_the_same_answers(taskbench_dir, tmp_path, capsys):
    rows = [{"id": k, "harness": {"raw": [answer]}} for k, answer in ANSWERS.items()]
    path = tmp_path / "planning_quality-x.json"
    path.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    revalidate.main([str(path), "--data", str(taskbench_dir), "--without", "swaps,writing"])
    result = json.loads(capsys.readouterr().out)
    node_f1 = {k: v["overall_overall"]["node_f1"] for k, v in result.items() if k != "requests"}
    assert result["requests"] == 2
    assert node_f1["all repairs"] == 1.0  # both plans are [question-answering] after the repairs
    assert node_f1["without swaps"] < 1.0 and node_f1["without writing"] < 1.0
    assert node_f1["without swaps,writing"] < min(node_f1["without swaps"], node_f1["without writing"])
    assert node_f1["without relink"] == node_f1["without unrequested"] == 1.0  # not involved here


def test_written_predictions_keep_the_recorded_answers_and_carry_the_new_plans(taskbench_dir, tmp_path, capsys):
    rows = [{"id": k, "result": {"task_nodes": [], "task_links": []},
             "harness": {"raw_outputs": [answer], "seconds": 3.5, "plan": [], "repairs": []}}
            for k, answer in ANSWERS.items()]
    path, out = tmp_path / "global.json", tmp_path / "revalidated.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    revalidate.main([str(path), "--data", str(taskbench_dir), "--write", str(out)])
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in written] == list(ANSWERS)
    for row in written:
        assert [n["task"] for n in row["result"]["task_nodes"]] == ["Question Answering"]
        assert [t["task"] for t in row["harness"]["plan"]] == ["question-answering"]
        assert row["harness"]["repairs"] and row["harness"]["revalidated"] is True
        assert row["harness"]["seconds"] == 3.5 and row["harness"]["raw_outputs"] == [ANSWERS[row["id"]]]
    capsys.readouterr()
