"""TaskBench's protocol (domain tools), the paper's critic, and single-task accuracy in the comparison."""

from __future__ import annotations

import csv
import json

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.critic import critic_messages, parse_verdict
from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.compare import Comparison, build_agent
from hugginggpt.eval.scoring import score

from .test_compare import Scripted

PLAN_A = [{"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a cat"}},
          {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}}]
PLAN_B = [{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "hello"}}]


def _recording_factory(models, seen):
    def factory(name, llm, mode, root, tasks=None):
        seen[name] = tasks
        return build_agent(name, models[name], mode, root, tasks)
    return factory


def test_domain_tools_are_what_every_agent_is_offered(dataset, tmp_path):  # noqa: F811
    seen: dict = {}
    models = {"global": Scripted(responses=[AIMessage(json.dumps(PLAN_A)), AIMessage(json.dumps(PLAN_B))])}
    comparison = Comparison(dataset, None, tmp_path / "o", agents=["global"], progress=False,
                            factory=_recording_factory(models, seen))
    comparison.run(dataset.select())
    assert comparison.tools == "domain"  # TaskBench's protocol is the default
    assert list(seen["global"]) == ["image-classification", "text-to-image", "text-to-speech", "object-detection"]
    agent = build_agent("global", None, "plan", tmp_path / "a", seen["global"])
    assert sorted(agent.task_specs) == sorted(seen["global"])  # the planner's task list: the domain's only
    assert len(build_agent("react", None, "plan", tmp_path / "b").tools) > 20  # --tools all: the whole table
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["tools"] == "domain"
    with pytest.raises(HuggingGPTError, match="--tools"):
        Comparison(dataset, None, tmp_path / "x", tools="some")


def test_critic_pass_rate_no_verdicts_and_single_task_accuracy(dataset, tmp_path):  # noqa: F811
    models = {"global": Scripted(responses=[AIMessage(json.dumps(PLAN_A)), AIMessage(json.dumps(PLAN_B))])}
    critic = Scripted(responses=[AIMessage('{"choice": "yes", "reason": "both steps"}'),
                                 AIMessage("Looks fine to me!")])  # no JSON: no verdict, not a crash
    out = tmp_path / "o"
    report = Comparison(dataset, None, out, agents=["global"], progress=False, critic=critic,
                        factory=_recording_factory(models, {})).run(dataset.select())["global"]
    summary = report.summary()
    assert summary["critic_pass_rate"] == 1.0 and summary["critic_judged"] == 2
    assert summary["critic_no_verdict"] == 1
    assert summary["critic_by_type"]["chain"]["critic_pass_rate"] == 1.0
    assert summary["critic_by_type"]["single"] == {"critic_pass_rate": None, "critic_judged": 1,
                                                   "critic_no_verdict": 1}
    assert summary["single_task_accuracy"] == 1.0  # b: exactly Text-to-Speech
    verdicts = [json.loads(line) for line in (out / "predictions" / "global.critic.json").read_text().splitlines()]
    assert [v["choice"] for v in verdicts] == ["yes", None]
    with (out / "metrics.csv").open() as fh:
        rows = {r["group"]: r for r in csv.DictReader(fh)}
    assert rows["chain_overall"]["critic_pass_rate"] == "1.0" and rows["single_overall"]["critic_no_verdict"] == "1"
    assert rows["single_overall"]["single_task_accuracy"] == "1.0" and rows["chain_overall"]["single_task_accuracy"] == ""
    assert "critic_pass_rate" in json.loads((out / "summary.json").read_text())["agents"]["global"]
    # a re-run judges nothing again (the critic has no answers left: it would fail loudly)
    Comparison(dataset, None, out, agents=["global"], progress=False, critic=critic,
               factory=_recording_factory(models, {})).run(dataset.select())


def test_a_wrong_single_task_is_not_accurate(dataset, tmp_path):  # noqa: F811
    wrong = [{"task": "object-detection", "id": 0, "dep": [-1], "args": {"image": "x.png"}}]
    models = {"global": Scripted(responses=[AIMessage(json.dumps(PLAN_A)), AIMessage(json.dumps(wrong))])}
    report = Comparison(dataset, None, tmp_path / "o", agents=["global"], progress=False,
                        factory=_recording_factory(models, {})).run(dataset.select())["global"]
    assert report.summary()["single_task_accuracy"] == 0.0
    assert "critic_pass_rate" not in report.summary()  # no critic asked: no critic figures


@pytest.mark.parametrize("answer, choice", [
    ('{"choice": "yes", "reason": "fine"}', "yes"),
    ('Sure. ```json\n{"choice": "No", "reason": "extra step"}\n```', "no"),
    ("{'choice': 'yes.', 'reason': 'ok'}", "yes"),
    ('{"choice": "maybe", "reason": "unsure"}', None),
    ('{"verdict": "yes"}', None),
    ("yes", None),
    ("", None),
    ('{"choice": ["yes"]}', None),
])
def test_critic_answers_are_read_leniently_or_give_no_verdict(answer, choice):
    assert parse_verdict(answer).choice == choice


def test_critic_prompt_is_static_first_then_request_and_plan():
    from hugginggpt.tools import task_table

    table = task_table()
    tasks = {n: table[n] for n in ("translation", "text-to-speech")}
    first = critic_messages("Say hi", PLAN_B, tasks)
    second = critic_messages("Translate hi", [], tasks)
    assert first[0].content == second[0].content and "- translation(" in first[0].content
    assert '"choice"' in first[0].content and first[1].content.startswith("Request: Say hi\nPlan: [")


def test_unknown_tools_in_a_predictions_file_score_as_wrong():
    tools = [{"id": "Text-to-Speech", "input-type": ["text"], "output-type": ["audio"]}]
    label = {"id": "1", "type": "single", "task_nodes": [{"task": "Text-to-Speech", "arguments": ["hi"]}]}
    right = {"id": "1", "result": {"task_nodes": [{"task": "Text-to-Speech", "arguments": ["hi"]}]}}
    extra = {"id": "1", "result": {"task_nodes": [{"task": "Text-to-Speech", "arguments": ["hi"]},
                                                  {"task": "Fill Mask", "arguments": ["hi"]}]}}
    unknown = {"id": "1", "result": {"task_nodes": [{"task": "Speak Loudly", "arguments": ["hi"]}]}}
    good = score([label], {"1": right}, tools, groups=["overall_overall"])["overall_overall"]
    worse = score([label], {"1": extra}, tools, groups=["overall_overall"])["overall_overall"]
    bad = score([label], {"1": unknown}, tools, groups=["overall_overall"])["overall_overall"]
    assert (good.t_f1, good.v_f1, good.ned) == (1.0, 1.0, 0.0)
    # evaluate.py: an unknown tool counts in no node class, but its arguments and its step are wrong
    assert worse.node_f1 == 1.0 and worse.t_f1 < 1.0 and worse.v_f1 < 1.0 and worse.ned > 0
    assert bad.node_f1 == 0.0 and bad.t_f1 == 0.0 and bad.v_f1 == 0.0 and bad.ned == 1.0
