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
    from hugginggpt import build

    monkeypatch.setattr(build, "make_llm", lambda settings: model)
    out = tmp_path / "cmp"
    rc = main(["compare", "--data", str(dataset.root), "--agents", "global", "--llm", "openai:scripted",
               "--types", "single", "--mode", "plan", "--out", str(out)])
    assert rc == 0
    assert "global (plan, --tools domain, 1 requests)" in capsys.readouterr().out
    row = json.loads((out / "predictions" / "global.json").read_text())
    assert row["id"] == "b" and row["result"]["task_nodes"] == [{"task": "Text-to-Speech", "arguments": ["hello"]}]
    assert {p.name for p in out.glob("*.png")} == {"metrics.png", "latency.png", "llm_calls.png"}


def test_compare_rejects_unknown_agents(dataset, capsys):  # noqa: F811
    assert main(["compare", "--data", str(dataset.root), "--agents", "global,magic", "--llm", "x:y"]) == 1
    assert "unknown agent(s) magic" in capsys.readouterr().err


def _stand_in_plans(taskbench, samples):
    from hugginggpt.eval.mapping import TaskBenchMapping

    mapping = TaskBenchMapping(taskbench.tools)
    return {s.request: mapping.sample_to_plan(s.nodes) for s in samples}


COMPARE = ["compare", "--types", "chain", "--seed", "2", "--limit", "4", "--agents", "global,tools",
           "--llm", "openai:stand-in", "--no-plots"]


def test_compare_at_scale_through_the_command(taskbench, taskbench_dir, tmp_path, monkeypatch, capsys):
    """--base-url (and HUGGINGGPT_BASE_URL), --concurrency, --shard and merge; piped: plain progress lines
    and tables at their full width."""
    from hugginggpt import config
    from tests.openai_server import OpenAIServer

    samples = taskbench.select(types=["chain"], seed=2)[:4]
    data = ["--data", str(taskbench_dir)]
    with OpenAIServer(plans=_stand_in_plans(taskbench, samples)) as server:
        assert main([*COMPARE, *data, "--base-url", server.url, "--concurrency", "3", "--out", str(tmp_path / "all")]) == 0
        captured = capsys.readouterr()
        assert "global (plan): 4 request(s) to run" in captured.err
        assert "global (plan): 4/4 done, 0 failed, " in captured.err and " req/min, ETA " in captured.err
        assert "…" not in captured.out and "| global |" not in captured.out
        assert "n-F1" in captured.out and "bootstrap intervals" in captured.out

        monkeypatch.setenv(config.var("base_url"), server.url)  # as for run: the variable when no flag
        for part in ("1/2", "2/2"):
            out = tmp_path / part.replace("/", "of")
            assert main([*COMPARE, *data, "--shard", part, "-q", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "2of2"), str(tmp_path / "1of2"), "--out", str(tmp_path / "merged"),
                 "--no-plots"]) == 0
    assert "results in" in capsys.readouterr().out
    for name in ("global", "tools"):
        merged = [json.loads(line)["result"] for line in (tmp_path / "merged" / "predictions" / f"{name}.json")
                  .read_text().splitlines()]
        whole = [json.loads(line)["result"] for line in (tmp_path / "all" / "predictions" / f"{name}.json")
                 .read_text().splitlines()]
        assert merged == whole and len(whole) == 4


def test_compare_says_a_bad_shard_or_concurrency_in_one_line(dataset, capsys):  # noqa: F811
    assert main(["compare", "--data", str(dataset.root), "--llm", "x:y", "--shard", "3/2"]) == 1
    assert capsys.readouterr().err.strip() == "hugginggpt: error: --shard must be i/n with 1 <= i <= n (e.g. 1/4), got '3/2'"
    assert main(["compare", "--data", str(dataset.root), "--llm", "x:y", "--concurrency", "0"]) == 1
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_merge_of_a_folder_that_is_no_comparison_is_one_line(tmp_path, capsys):
    assert main(["merge", str(tmp_path), "--out", str(tmp_path / "m")]) == 1
    assert capsys.readouterr().err.strip() == f"hugginggpt: error: {tmp_path} is not a comparison folder (no run.json)"
