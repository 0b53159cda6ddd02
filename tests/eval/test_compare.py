"""The comparison harness with the real agents on scripted chat models (planning-only mode)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.compare import (
    Comparison,
    build_agent,
    call_digest,
    placeholder_tools,
    plan_list,
    selected_types,
)



class Scripted(FakeMessagesListChatModel):
    """Answers from a script in order, with token usage; fails loudly once the script is used up."""

    calls: int = 0

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.i >= len(self.responses):
            raise AssertionError("the agent asked the model more often than scripted")
        message = self.responses[self.i]
        self.i += 1
        self.calls += 1
        usage = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
        return ChatResult(generations=[ChatGeneration(message=message.model_copy(update={"usage_metadata": usage}))])


def _call(name, call_id, **args):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def scripts(out: Path) -> dict[str, Scripted]:
    """Per agent: request A (make a cat picture, classify it) and request B (speak "hello")."""
    plan_a = [{"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a cat"}},
              {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}}]
    plan_b = [{"task": "text-to-audio", "id": 0, "dep": [-1], "args": {"text": "hello"}}]  # the wrong task
    first_image = out / "tools" / "placeholders" / f"text-to-image-{call_digest({'text': 'a cat'})}.png"
    return {
        "global": Scripted(responses=[AIMessage(json.dumps(plan_a)), AIMessage(json.dumps(plan_b))]),
        "react": Scripted(responses=[
            AIMessage('Thought: draw it\nAction: text-to-image\nAction Input: {"text": "a cat"}'),
            AIMessage('Thought: classify\nAction: image-classification\nAction Input: {"image": "' + first_image.name + '"}'),
            AIMessage("Thought: done\nFinal Answer: a cat"),
            AIMessage('Thought: speak\nAction: text-to-speech\nAction Input: {"text": "hello"}'),
            AIMessage("Final Answer: here it is"),
        ]),
        "tools": Scripted(responses=[
            AIMessage("", tool_calls=[_call("text-to-image", "c1", text="a cat")]),
            AIMessage("", tool_calls=[_call("image-classification", "c2", image=str(first_image))]),
            AIMessage("It is a cat."),
            AIMessage("", tool_calls=[_call("text-to-speech", "c3", text="hello")]),
            AIMessage("Done."),
        ]),
    }


def _factory(models):
    return lambda name, llm, mode, root, tasks=None: build_agent(name, models[name], mode, root, tasks)


def test_compares_the_three_agents_and_writes_everything(dataset, tmp_path):
    out = tmp_path / "out"
    models = scripts(out)
    comparison = Comparison(dataset, llm=None, out=out, mode="plan", factory=_factory(models), progress=False,
                            tools="all")  # every task offered: the global agent can plan one TaskBench lacks
    reports = comparison.run(dataset.select())

    assert all(m.i == len(m.responses) for m in models.values())  # every scripted answer was used
    # the tool-loop agents did exactly what the ground truth says
    for name in ("react", "tools"):
        overall = reports[name].scores["overall_overall"]
        assert (overall.node_f1, overall.edge_f1, overall.v_f1, overall.ned) == (1.0, 1.0, 1.0, 0.0), name
        assert reports[name].failures == 0
    # global planned B with a task TaskBench does not know: a missed node (P 1, R 2/3)
    overall = reports["global"].scores["overall_overall"]
    assert overall.node_f1 == pytest.approx(0.8) and overall.edge_f1 == 1.0
    summary = reports["react"].summary()
    assert summary["llm_calls"] == pytest.approx(2.5) and summary["prompt_tokens"] == pytest.approx(250)
    assert reports["global"].summary()["llm_calls"] == pytest.approx(1.0)

    rows = [json.loads(line) for line in (out / "predictions" / "react.json").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[0]["result"]["task_nodes"] == [{"task": "Text-to-Image", "arguments": ["a cat"]},
                                               {"task": "Image Classification", "arguments": ["<node-0>"]}]
    assert rows[0]["harness"]["llm_calls"] == 3 and rows[0]["harness"]["seconds"] > 0

    with (out / "metrics.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert {(r["agent"], r["group"]) for r in table} >= {("global", "overall_overall"), ("react", "chain_overall"),
                                                         ("tools", "single_overall"), ("tools", "overall_2")}
    assert "| agent | group |" in (out / "metrics.md").read_text()
    assert json.loads((out / "summary.json").read_text())["agents"]["tools"]["failures"] == 0

    from hugginggpt.eval.plots import write_plots

    for path in write_plots(comparison).values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_rerun_resumes_and_skips_done_requests(dataset, tmp_path):
    out = tmp_path / "out"
    models = scripts(out)
    global_only = Comparison(dataset, None, out, agents=["global"], factory=_factory(models), progress=False)
    global_only.run(dataset.select(limit=1))
    assert models["global"].calls == 1
    report = Comparison(dataset, None, out, agents=["global"], factory=_factory(models), progress=False) \
        .run(dataset.select())["global"]
    assert models["global"].calls == 2  # only request b ran the second time
    assert len((out / "predictions" / "global.json").read_text().splitlines()) == 2
    assert len(report.rows) == 2


def test_a_failing_request_is_recorded_not_fatal(dataset, tmp_path):
    models = {"global": Scripted(responses=[AIMessage(json.dumps(
        [{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "hello"}}]))])}
    # request a exhausts nothing; b finds the script used up and raises inside the model
    report = Comparison(dataset, None, tmp_path / "o", agents=["global"], factory=_factory(models),
                        progress=False).run(dataset.select())["global"]
    assert report.failures == 1
    failed = next(r for r in report.rows if r["harness"]["error"])
    assert failed["result"]["task_nodes"] == [] and "scripted" in failed["harness"]["error"]


def test_placeholder_tools_return_unique_outputs_of_the_right_kind(tmp_path):
    tools = {t.name: t for t in placeholder_tools(["text-to-image", "image-classification"], root=tmp_path)}
    first = tools["text-to-image"].invoke({"text": "a cat"})
    second = tools["text-to-image"].invoke({"text": "a dog"})
    assert first["image"].endswith(".png") and Path(first["image"]).is_absolute() and first != second
    assert "text" in tools["image-classification"].invoke({"image": first["image"]})
    with pytest.raises(Exception):
        tools["text-to-image"].invoke({"wrong": 1})  # the real argument schema still applies


def test_helpers_reject_bad_input():
    assert plan_list({"plan": [{"task": "x", "id": 0}]}) == [{"task": "x", "id": 0}]
    with pytest.raises(TypeError):
        plan_list(42)
    assert selected_types("dag, single") == ["dag", "single"]
    with pytest.raises(HuggingGPTError, match="tree"):
        selected_types("tree")
