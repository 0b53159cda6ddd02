"""TaskBench metrics: the cross-check against TaskBench's own evaluate.py figures, and the quirks."""

from __future__ import annotations

import json

import pytest

from hugginggpt.eval.scoring import (
    TASKBENCH_KEYS,
    binary_f1,
    content_type,
    group_names,
    load_predictions,
    score,
    score_files,
    sequence_ratio,
)

from .conftest import TOOLS


def test_reproduces_taskbench_reference_figures(taskbench_dir):
    expected = json.loads((taskbench_dir / "reference" / "predictions_seed1.metrics.json").read_text())
    scores = score_files(taskbench_dir, taskbench_dir / "reference" / "predictions_seed1.json")
    assert set(expected) == set(scores) == set(group_names())
    compared = 0
    for group, figures in expected.items():
        ours = scores[group].as_taskbench()
        for key, value in figures.items():
            if key == "step_supports":  # step metrics (ROUGE, BERTScore) are not computed
                continue
            assert ours[key] == pytest.approx(value, abs=1e-4), (group, key)
            compared += 1
    assert compared > 100
    assert scores["overall_overall"].node_f1 == pytest.approx(0.9017, abs=1e-4)


def test_ground_truth_as_predictions_is_perfect(taskbench):
    predictions = {r["id"]: {"id": r["id"], "result": {"task_nodes": r["task_nodes"]}} for r in taskbench.records}
    scores = score(taskbench.records, predictions, list(taskbench.tools.values()))
    for group in ("overall_overall", "chain_overall", "dag_overall"):
        s = scores[group]
        assert (s.node_f1, s.edge_f1, s.t_f1, s.v_f1, s.ned) == (1.0, 1.0, 1.0, 1.0, 0.0)
    assert scores["overall_overall"].node_f1_macro == 1.0
    # single-tool graphs have no links at all: evaluate.py's F1 of nothing is 0
    assert scores["single_overall"].edge_f1 == 0.0
    assert scores["overall_10"].supports == 0 and scores["overall_10"].node_f1 is None


def _label(i, nodes, kind="chain"):
    return {"id": str(i), "type": kind, "task_nodes": nodes}


def _pred(i, nodes):
    return {"id": str(i), "result": {"task_nodes": nodes}}


TOOL_LIST = list(TOOLS.values())


def test_links_come_from_argument_references_not_task_links():
    gold = [{"task": "Text-to-Image", "arguments": ["a cat"]},
            {"task": "Image Classification", "arguments": ["<node-0>"]}]
    cut = [{"task": "Text-to-Image", "arguments": ["a cat"]},
           {"task": "Image Classification", "arguments": ["example.jpg"]}]
    labels = [_label(1, gold)]
    s = score(labels, {"1": {"id": "1", "result": {"task_nodes": cut, "task_links": [
        {"source": "Text-to-Image", "target": "Image Classification"}]}}}, TOOL_LIST, ["overall_overall"])
    s = s["overall_overall"]
    assert s.node_f1 == 1.0 and s.edge_f1 == 0.0
    # t-F1: the reference is named by the producer's output type (text... image here), the file by extension
    assert s.t_f1 == 1.0  # both "Image Classification-image"
    assert s.v_f1 == pytest.approx(2 * 0.5 * 0.5 / 1.0)


def test_unknown_tools_are_ignored_by_node_f1_but_not_by_edit_distance():
    labels = [_label(1, [{"task": "Text-to-Image", "arguments": ["x"]}], "single")]
    preds = {"1": _pred(1, [{"task": "Text-to-Image", "arguments": ["x"]},
                            {"task": "Audio Quality Enhancer", "arguments": ["x"]}])}
    s = score(labels, preds, TOOL_LIST, ["overall_overall"])["overall_overall"]
    assert s.node_f1 == 1.0
    assert s.ned == pytest.approx(1 - 2 / 3)


def test_failing_argument_repeats_previous_entry_and_broken_sample_is_skipped():
    labels = [_label(1, [{"task": "Text-to-Image", "arguments": ["a dog", 250]}]),
              _label(2, [{"task": "Text-to-Image", "arguments": ["x"]}])]
    preds = {"1": _pred(1, [{"task": "Text-to-Image", "arguments": ["a dog"]}]),
             "2": {"id": "2", "result": {"task_nodes": {"step": "not a list"}}}}
    s = score(labels, preds, TOOL_LIST, ["overall_overall"])["overall_overall"]
    assert (s.all_samples, s.supports) == (2, 1)
    assert s.v_f1 == 1.0  # 250 raised, so it repeated "a dog": the sets are equal


def test_self_reference_is_dropped_and_underscores_are_spaces():
    labels = [_label(1, [{"task": "Text-to-Image", "arguments": ["a cat"]}])]
    preds = {"1": _pred(1, [{"task": "Text-to-Image", "arguments": ["a cat", "<node-0>"]}])}
    s = score(labels, preds, TOOL_LIST, ["overall_overall"])["overall_overall"]
    assert s.v_f1 == 1.0 and s.edge_f1 == 0.0
    labels = [_label(1, [{"task": "Image Classification", "arguments": ["a.png"]}])]
    preds = {"1": _pred(1, [{"task": "Image_Classification", "arguments": ["a.png"]}])}
    assert score(labels, preds, TOOL_LIST, ["overall_overall"])["overall_overall"].node_f1 == 1.0


def test_macro_counts_tools_without_support_as_zero():
    labels = [_label(1, [{"task": "Text-to-Image", "arguments": ["a"]}])]
    s = score(labels, {"1": _pred(1, labels[0]["task_nodes"])}, TOOL_LIST, ["overall_overall"])["overall_overall"]
    assert s.node_f1 == 1.0 and s.node_f1_macro == pytest.approx(1 / len(TOOL_LIST))


def test_groups_use_the_real_number_of_nodes():
    labels = [_label(1, [{"task": "Text-to-Image", "arguments": ["a"]}] * 3, "dag")]
    scores = score(labels, {"1": _pred(1, labels[0]["task_nodes"])}, TOOL_LIST)
    assert scores["overall_3"].supports == 1 and scores["dag_overall"].supports == 1
    assert scores["overall_1"].all_samples == 0 and scores["chain_overall"].all_samples == 0


def test_building_blocks():
    assert content_type("'photo.JPG'") == "text"  # case-sensitive, as TaskBench
    assert content_type("'clip.mp4'") == "video" and content_type("a.wav file") == "audio"
    assert sequence_ratio([1, 2, 3], [1, 3]) == pytest.approx(0.8)
    assert sequence_ratio([], []) == 1.0
    assert binary_f1([{"a", "b"}], [{"b", "c"}]) == pytest.approx(0.5)
    assert binary_f1([[]], [[]]) == 0.0
    assert set(TASKBENCH_KEYS) >= {"node_f1", "node_f1_macro", "edge_f1", "t_f1", "v_f1", "ned"}


def test_predictions_file_last_row_wins_and_bad_rows_raise(tmp_path):
    from hugginggpt.errors import DatasetError

    path = tmp_path / "p.json"
    path.write_text('{"id": 1, "result": {"task_nodes": []}}\n\n{"id": "1", "result": {"x": 1}}\n')
    assert load_predictions(path) == {"1": {"id": "1", "result": {"x": 1}}}
    path.write_text('{"result": {}}\n')
    with pytest.raises(DatasetError, match="line 1"):
        load_predictions(path)
