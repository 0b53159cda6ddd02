"""`hugginggpt score` and `hugginggpt compare` through the real command-line entry point."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.cli.main import main

from .test_compare import Scripted


def test_score_prints_json_matching_the_reference(taskbench_dir, capsys):
    rc = main(["score", "--data", str(taskbench_dir),
               "--predictions", str(taskbench_dir / "reference" / "predictions_seed1.json"), "--json"])
    assert rc == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["overall_overall"]["edge_f1"] == pytest.approx(0.7679, abs=1e-4)
    assert figures["dag_overall"]["all_samples"] == 46


def test_score_prints_a_table(taskbench_dir, capsys):
    assert main(["score", "--data", str(taskbench_dir),
                 "--predictions", str(taskbench_dir / "reference" / "predictions_seed1.json")]) == 0
    out = capsys.readouterr().out
    assert "overall_overall" in out and "0.9017" in out and "overall_9" not in out


def test_score_missing_file_is_one_line(taskbench_dir, tmp_path, capsys):
    assert main(["score", "--data", str(taskbench_dir), "--predictions", str(tmp_path / "none.json")]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"hugginggpt: error: predictions file {tmp_path / 'none.json'} not found"


def test_compare_command_runs_writes_and_plots(dataset, tmp_path, monkeypatch, capsys):  # noqa: F811
    plan = [{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "hello"}}]
    model = Scripted(responses=[AIMessage(json.dumps(plan))])
    import hugginggpt.llm

    monkeypatch.setattr(hugginggpt.llm, "load_llm", lambda spec: model)
    out = tmp_path / "cmp"
    rc = main(["compare", "--data", str(dataset.root), "--agents", "global", "--llm", "scripted:x",
               "--types", "single", "--mode", "plan", "--out", str(out)])
    assert rc == 0
    assert "global (plan, --tools domain, 1 requests)" in capsys.readouterr().out
    row = json.loads((out / "predictions" / "global.json").read_text())
    assert row["id"] == "b" and row["result"]["task_nodes"] == [{"task": "Text-to-Speech", "arguments": ["hello"]}]
    assert {p.name for p in out.glob("*.png")} == {"metrics.png", "latency.png", "llm_calls.png"}


def test_compare_rejects_unknown_agents(dataset, capsys):  # noqa: F811
    assert main(["compare", "--data", str(dataset.root), "--agents", "global,magic", "--llm", "x:y"]) == 1
    assert "unknown agent(s) magic" in capsys.readouterr().err
