"""benchmarks/revalidate.py: recorded planner answers validated again, with every pass and without
each switchable one (or several together), scored as TaskBench does, without LLM calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
revalidate = pytest.importorskip("revalidate")

#: Two planner answers to dev requests: a transcription that no pass changes, and one that runs the same
#: detection twice (the repeats pass takes the second out).
ANSWERS = {
    "33446682": '{"tasks": [{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "example.wav"}}]}',
    "57993067": '{"tasks": [{"task": "object-detection", "id": 0, "args": {"image": "example.jpg"}}, '
                '{"task": "object-detection", "id": 1, "args": {"image": "example.jpg"}}]}',
}


def test_each_pass_is_measured_on_the_same_answers(taskbench_dir, tmp_path, capsys):
    rows = [{"id": k, "harness": {"raw": [answer]}} for k, answer in ANSWERS.items()]
    path = tmp_path / "planning_quality-x.json"
    path.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    revalidate.main([str(path), "--data", str(taskbench_dir), "--without", "repeats,kinds"])
    result = json.loads(capsys.readouterr().out)
    ned = {k: v["overall_overall"]["ned"] for k, v in result.items() if k != "requests"}
    assert result["requests"] == 2
    assert ned["all passes"] == 0.0  # [ASR] and [object-detection] after the passes
    assert ned["without repeats"] > 0.0 and ned["without repeats,kinds"] == ned["without repeats"]
    assert ned["without references"] == ned["without kinds"] == 0.0  # not involved here


def test_an_unknown_pass_name_is_refused(taskbench_dir, tmp_path):
    path = tmp_path / "planning_quality-x.json"
    path.write_text(json.dumps({"rows": [{"id": "33446682", "harness": {"raw": [ANSWERS["33446682"]]}}]}))
    with pytest.raises(ValueError, match="no switchable plan pass named"):
        revalidate.main([str(path), "--data", str(taskbench_dir), "--without", "swaps"])


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
        assert len(row["result"]["task_nodes"]) == 1
        assert len(row["harness"]["plan"]) == 1 and row["harness"]["revalidated"] is True
        assert row["harness"]["seconds"] == 3.5 and row["harness"]["raw_outputs"] == [ANSWERS[row["id"]]]
    capsys.readouterr()
