"""The first offline run of issue 10, end to end with real models and no Hub: the 1.5B GGUF controller
plans, the all-MiniLM-L6-v2 folder named with ``--local-model`` scores, and the answer keeps to what
ran. The LLM's tokens depend on the CPU, so the test checks what must hold whatever it plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.agent.answer_check import unknown_numbers
from hugginggpt.cli.main import main
from tests.shared import gguf_or_skip, model_or_skip

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
REQUEST = "How similar are 'A cat sits on the mat' and 'A dog lies on the rug'?"


@pytest.fixture
def offline(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # as HF_HUB_OFFLINE=1 does at startup
    for var in ("HUGGINGGPT_LLM", "HUGGINGGPT_LOCAL_MODELS", "HUGGINGGPT_AGENT", "HUGGINGGPT_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")


def test_named_local_model_runs_offline_and_the_answer_keeps_to_the_results(offline, capsys, tmp_path):
    gguf = gguf_or_skip("qwen2.5-coder-1.5b")
    minilm = model_or_skip("all-minilm-l6-v2")
    pytest.importorskip("torch")
    runs = tmp_path / "runs"
    code = main(["run", REQUEST, "--llm", f"gguf:{gguf}", "--local-model", f"sentence-similarity={minilm}",
                 "--execution", "local", "--trace-dir", str(runs), "--json", "-q"])
    out, err = capsys.readouterr()
    assert code == 0, err
    output = json.loads(out)
    trace = json.loads(Path(output["trace"]).read_text(encoding="utf-8"))

    # the model the user named runs every sentence-similarity task, chosen without an LLM call
    for step in output["plan"]:
        if step["task"] == "sentence-similarity":
            assert output["selections"][str(step["id"])]["model"] == MINILM
            outcome = output["results"][str(step["id"])]
            problems = ("cannot load", "not available", "cannot download", "cannot run")
            assert outcome["status"] == "ok" or not any(p in outcome["error"] for p in problems), outcome
    assert "selection" not in {call["stage"] for call in trace["llm_calls"]}  # offline: no real choice anywhere

    # the answer states no result that no task produced
    answer = output["output"]
    ok = [o for o in output["results"].values() if o["status"] == "ok"]
    if output["plan"] and not ok:
        assert answer.startswith("I could not complete the request")
        assert "response" not in {call["stage"] for call in trace["llm_calls"]}
    if ok:
        shown = "\n".join(json.dumps(call["prompt"]) for call in trace["llm_calls"] if call["stage"] == "response")
        llm_part = answer.split("\n\nNote: ")[0].split("\n\nNot done:\n")[0]
        assert set(unknown_numbers(llm_part, shown)) <= set(trace.get("invented_numbers") or [])
        for number in trace.get("invented_numbers") or []:
            assert number in answer[len(llm_part):]  # each one is corrected in a note
    for outcome in output["results"].values():
        if outcome["status"] != "ok":
            assert f"({outcome['task']})" in answer  # every failure is reported, with its task
