"""The critic on a real local model (SmolLM2-135M GGUF) judging plans of real TaskBench requests."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.eval.compare import Comparison, build_agent
from tests.shared import gguf_or_skip

from .test_compare import Scripted

pytestmark = pytest.mark.slow


def test_a_gguf_critic_judges_every_plan_without_crashing(taskbench, tmp_path):
    from hugginggpt.llm import load_llm

    critic = load_llm("gguf:" + gguf_or_skip("smollm2-135m"), n_threads=2, n_ctx=4096, max_tokens=64)
    samples = [s for s in taskbench.samples if s.type == "single"][:2]
    plans = [[{"task": "automatic-speech-recognition", "id": 0, "dep": [-1], "args": {"audio": "example.wav"}}],
             []]  # a plausible plan and an empty one
    planner = Scripted(responses=[AIMessage(json.dumps(p)) for p in plans])
    out = tmp_path / "cmp"
    report = Comparison(taskbench, None, out, agents=["global"], progress=False, critic=critic,
                        factory=lambda name, llm, mode, root, tasks=None: build_agent(name, planner, mode, root, tasks)
                        ).run(samples)["global"]
    verdicts = [json.loads(line) for line in (out / "predictions" / "global.critic.json").read_text().splitlines()]
    assert len(verdicts) == 2 and all(v["choice"] in ("yes", "no", None) for v in verdicts)
    assert all(v["raw"] or v["reason"] for v in verdicts)  # what the critic said, or why there is no verdict
    summary = report.summary()
    assert summary["critic_judged"] == 2
    given = 2 - summary["critic_no_verdict"]
    assert (summary["critic_pass_rate"] is None) == (given == 0)
    assert "critic_pass_rate" in json.loads((out / "summary.json").read_text())["agents"]["global"]
