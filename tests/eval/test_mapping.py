"""TaskBench tool names <-> our tasks, and plans <-> TaskBench graphs (against the real task table)."""

from __future__ import annotations

from hugginggpt.eval.mapping import TaskBenchMapping, hub_name
from hugginggpt.eval.scoring import score
from hugginggpt.tools import task_table


def test_every_taskbench_tool_has_a_task(taskbench):
    mapping = TaskBenchMapping(taskbench.tools)
    assert mapping.unmatched() == {}
    assert mapping.to_task("Image Classification") == "image-classification"
    assert mapping.to_task("Text-to-Image") == "text-to-image"
    assert mapping.to_task("Token_Classification") == "token-classification"
    assert mapping.to_task("Image Editing") == "image-text-to-image"
    assert mapping.to_tool("image-to-image") == "Image-to-Image"
    assert all(task in task_table() for task in (mapping.to_task(t) for t in taskbench.tools))


def test_unmatched_names_the_reason():
    mapping = TaskBenchMapping(["Audio Quality Enhancer", "Translation"])
    assert mapping.to_task("Audio Quality Enhancer") is None
    assert "audio-quality-enhancer" in mapping.unmatched()["Audio Quality Enhancer"]
    assert mapping.to_tool("text-classification") is None
    assert hub_name("Image-to-Text") == "image-to-text"


def test_plan_to_prediction_converts_references_and_drops_options(taskbench):
    mapping = TaskBenchMapping(taskbench.tools)
    plan = [
        {"task": "text-to-image", "id": 3, "dep": [-1], "args": {"text": "a red fox"}},
        {"task": "image-classification", "id": 7, "dep": [3], "args": {"image": "<resource>-3", "top_k": 2}},
        {"task": "question-answering", "id": 9, "dep": [7],
         "args": {"question": "What is it?", "context": "Labels: <resource>-7"}},
    ]
    row = mapping.plan_to_prediction("s1", plan)
    assert row["id"] == "s1"
    assert row["result"]["task_nodes"] == [
        {"task": "Text-to-Image", "arguments": ["a red fox"]},
        {"task": "Image Classification", "arguments": ["<node-0>"]},
        {"task": "Question Answering", "arguments": ["What is it?", "Labels: <node-1>"]},
    ]
    assert row["result"]["task_links"] == [
        {"source": "Text-to-Image", "target": "Image Classification"},
        {"source": "Image Classification", "target": "Question Answering"},
    ]


def test_ground_truth_round_trips_through_our_plans(taskbench):
    """TaskBench graph -> our plan -> TaskBench prediction scores perfectly on the nodes and
    almost perfectly elsewhere (TaskBench has some arguments no Hub task takes)."""
    mapping = TaskBenchMapping(taskbench.tools)
    samples = [s for s in taskbench if all(mapping.to_task(n["task"]) for n in s.nodes)]
    assert len(samples) > 400
    plans = {s.id: mapping.sample_to_plan(s.nodes) for s in samples}
    assert all(isinstance(step["args"], dict) for plan in plans.values() for step in plan)
    predictions = {sid: mapping.plan_to_prediction(sid, plan) for sid, plan in plans.items()}
    labels = [r for r in taskbench.records if r["id"] in predictions]
    s = score(labels, predictions, list(taskbench.tools.values()), ["overall_overall"])["overall_overall"]
    assert s.node_f1 == 1.0 and s.ned == 0.0
    assert s.edge_f1 > 0.97 and s.t_f1 > 0.97 and s.v_f1 > 0.96


def test_sample_to_plan_puts_values_in_named_arguments(taskbench):
    mapping = TaskBenchMapping(taskbench.tools)
    plan = mapping.sample_to_plan([
        {"task": "Image-to-Text", "arguments": ["example.jpg"]},
        {"task": "Visual Question Answering", "arguments": ["example.jpg", "<node-0> what colour?"]},
        {"task": "Text-to-Speech", "arguments": ["<node-1>"]},
    ])
    assert plan[0] == {"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "example.jpg"}}
    assert plan[1]["args"] == {"image": "example.jpg", "question": "<resource>-0 what colour?"}
    assert plan[1]["dep"] == [0]
    assert plan[2]["args"] == {"text": "<resource>-1"} and plan[2]["dep"] == [1]


def test_domain_tasks_keep_only_the_arguments_a_taskbench_tool_takes():
    from hugginggpt.eval.mapping import TaskBenchMapping

    tools = {"Translation": {"id": "Translation", "input-type": ["text"], "output-type": ["text"]},
             "Tabular Classification": {"id": "Tabular Classification", "input-type": ["image"],
                                        "output-type": ["text"]}}
    mapping = TaskBenchMapping(tools)
    assert mapping.domain_tasks() == ["translation", "tabular-classification"]
    plan = [{"task": "translation", "id": 0, "dep": [-1], "args": {"text": "hola", "tgt_lang": "English"}},
            {"task": "tabular-classification", "id": 1, "dep": [-1], "args": {"table": "t.jpg"}},
            {"task": "text-to-image", "id": 2, "dep": [0], "args": {"text": "<resource>-0", "negative_prompt": "dark"}}]
    nodes = mapping.plan_to_prediction("1", plan)["result"]["task_nodes"]
    assert nodes[0] == {"task": "Translation", "arguments": ["hola"]}  # tgt_lang is no TaskBench input
    assert nodes[1] == {"task": "Tabular Classification", "arguments": ["t.jpg"]}  # a table argument is kept
    assert nodes[2]["arguments"] == ["<node-0>", "dark"]  # outside the domain: every value argument
