"""TaskBench metrics, computed exactly as TaskBench's ``evaluate.py`` (resource dependency mode).

Figures match the reference implementation to the last digit, so results are comparable with
published ones. That means keeping its quirks (see ``../shared/taskbench/README.md`` next to the checkout):

* node F1 is set-based per sample ("no matching"); tools not in ``tool_desc.json`` count nowhere;
* links come from ``<node-j>`` references inside arguments, not from ``task_links``; a link's
  source has ``_`` replaced by spaces, its target is the raw task name;
* an argument is named by its content type (file extension) or, for a reference, by the output
  type of the referenced tool; a reference to the node itself is dropped;
* an argument that raises while being read repeats the previous argument's entry;
* a sample that raises anywhere is skipped (counted in ``all_samples``, not in ``supports``);
* the edit distance is ``1 - mean(Levenshtein.ratio)`` on tool-id sequences (unknown tools -> 0).
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from hugginggpt.errors import DatasetError
from hugginggpt.eval.jsonl import numbered_lines

# TaskBench's own extension lists (its evaluate.py's content_type), not tools/resources/sniff.py's: the
# scorer must read a value's kind exactly as TaskBench does, or its v-F1 would not be TaskBench's.
_EXTENSIONS = (
    ("image", ("jpg", "png", "jpeg", "gif", "bmp", "tiff", "svg", "ico")),
    ("audio", ("mp3", "wav", "wma", "ogg", "aac", "flac", "aiff", "au")),
    ("video", ("mp4", "avi", "mov", "flv", "wmv", "mkv", "webm", "m4v", "mpg", "mpeg")),
)

METRICS = ("node_f1", "node_f1_macro", "edge_f1", "t_f1", "v_f1", "ned")

# our metric name -> evaluate.py's key
TASKBENCH_KEYS = {
    "node_precision": "node_micro_precision_no_matching",
    "node_recall": "node_micro_recall_no_matching",
    "node_f1": "node_micro_f1_no_matching",
    "node_precision_macro": "node_macro_precision_no_matching",
    "node_recall_macro": "node_macro_recall_no_matching",
    "node_f1_macro": "node_macro_f1_no_matching",
    "t_f1": "argument_task_argname_binary_f1_no_matching",
    "v_f1": "argument_task_argname_value_binary_f1_no_matching",
    "ned": "edit_distance",
    "edge_f1": "link_binary_f1",
}


@dataclass
class GroupScore:
    """The metrics of one group of samples; metric fields are None when no sample could be read."""

    all_samples: int = 0
    supports: int = 0
    node_precision: float | None = None
    node_recall: float | None = None
    node_f1: float | None = None
    node_precision_macro: float | None = None
    node_recall_macro: float | None = None
    node_f1_macro: float | None = None
    edge_f1: float | None = None
    t_f1: float | None = None
    v_f1: float | None = None
    ned: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_taskbench(self) -> dict[str, Any]:
        """The same figures under ``evaluate.py``'s key names."""
        out: dict[str, Any] = {"all_samples": self.all_samples}
        for key in ("node_supports", "link_supports", "argument_supports"):
            out[key] = self.supports
        if self.supports:
            out.update({theirs: getattr(self, ours) for ours, theirs in TASKBENCH_KEYS.items()})
        return out


@dataclass
class _Graph:
    """One sample read the way evaluate.py reads it."""

    names: list[str]
    links: list[tuple[str, str]]
    arg_names: list[str]
    arg_values: list[str]


def group_names(max_tools: int = 10) -> list[str]:
    """TaskBench's groups in ``--mode add``: by graph type, then by number of tools."""
    return [f"{s}_overall" for s in ("overall", "single", "chain", "dag")] + [
        f"overall_{n}" for n in range(1, max_tools + 1)
    ]


def score(labels: Iterable[Mapping[str, Any]], predictions: Mapping[str, Mapping[str, Any]],
          tools: Sequence[Mapping[str, Any]], groups: Iterable[str] | None = None) -> dict[str, GroupScore]:
    """Score predictions (id -> ``{"id", "result": {"task_nodes", ...}}``) against ground-truth rows.

    ``labels`` are raw TaskBench rows (``id``, ``type``, ``task_nodes``); ``tools`` the nodes of
    ``tool_desc.json`` (their order fixes the tool ids). Returns group name -> ``GroupScore``.
    """
    labels = list(labels)
    return {group: score_group(group_rows(labels, group), predictions, tools) for group in groups or group_names()}


def group_rows(labels: Iterable[Mapping[str, Any]], group: str) -> list[Mapping[str, Any]]:
    """The ground-truth rows of a group (``overall_overall``, ``chain_overall``, ``overall_3``...)."""
    split, n_tools = group.split("_", 1)
    return [row for row in labels if _in_group(row, split, n_tools)]


def _in_group(row: Mapping[str, Any], split: str, n_tools: str) -> bool:
    if split != "overall" and row.get("type") != split:
        return False
    try:
        real = len(row["task_nodes"])
    except (KeyError, TypeError):
        return False
    return n_tools == "overall" or str(real) == n_tools


def score_group(labels: Sequence[Mapping[str, Any]], predictions: Mapping[str, Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]]) -> GroupScore:
    """Metrics over the labels that have a prediction (ids in both, in label order)."""
    return group_score(read_graphs(labels, predictions, tools), tools)


def read_graphs(labels: Sequence[Mapping[str, Any]], predictions: Mapping[str, Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]]) -> list[tuple[_Graph, _Graph] | None]:
    """Each label that has a prediction, with it, read as evaluate.py reads them (gold and predicted
    graph), in label order; None for a pair evaluate.py skips. The reading of one pair depends on the
    pairs before it (its memory of the last argument), so the metrics of any selection of these read
    pairs (``group_score``) are computed on graphs read once, in this order."""
    output_types = {t["id"]: (t["output-type"][0] if t.get("output-type") else "none") for t in tools}
    reader = _ArgumentReader(output_types)
    graphs: list[tuple[_Graph, _Graph] | None] = []
    for row in labels:
        prediction = predictions.get(str(row["id"]))
        if prediction is None:
            continue
        try:
            graphs.append(reader.read_pair(row, prediction))
        except Exception:  # evaluate.py skips a sample that fails in any way; so must we
            graphs.append(None)
    return graphs


def group_score(graphs: Sequence[tuple[_Graph, _Graph] | None], tools: Sequence[Mapping[str, Any]]) -> GroupScore:
    """The metrics of read pairs (``read_graphs``; None: a skipped sample, counted in ``all_samples`` only)."""
    tool_names = [tool["id"] for tool in tools]
    read = [pair for pair in graphs if pair is not None]
    out = GroupScore(all_samples=len(graphs), supports=len(read))
    if not read:
        return out
    gold = [g for g, _ in read]
    pred = [p for _, p in read]
    out.node_precision, out.node_recall, out.node_f1, macro = _node_scores(
        [g.names for g in gold], [p.names for p in pred], tool_names
    )
    out.node_precision_macro, out.node_recall_macro, out.node_f1_macro = macro
    out.t_f1 = binary_f1([g.arg_names for g in gold], [p.arg_names for p in pred])
    out.v_f1 = binary_f1([g.arg_values for g in gold], [p.arg_values for p in pred])
    out.edge_f1 = binary_f1([g.links for g in gold], [p.links for p in pred])
    tool_ids = {name: i + 1 for i, name in enumerate(tool_names)} | {"<PAD>": -1}
    ratios = [
        sequence_ratio([tool_ids.get(n, 0) for n in p.names], [tool_ids.get(n, 0) for n in g.names])
        for g, p in read
    ]
    out.ned = 1 - sum(ratios) / len(ratios)
    return out


class _ArgumentReader:
    """Reads nodes and arguments like evaluate.py, including its memory of the last argument read."""

    def __init__(self, output_types: Mapping[str, str]):
        self.output_types = output_types
        self.last: dict[str, str] | None = None  # evaluate.py's ``new_argument``

    def read_pair(self, label: Mapping[str, Any], prediction: Mapping[str, Any]) -> tuple[_Graph, _Graph]:
        label_nodes = copy.deepcopy(label["task_nodes"])
        prediction_nodes = copy.deepcopy(prediction["result"]["task_nodes"])
        label_names = [node["task"].replace("_", " ") for node in label_nodes]
        prediction_names = [node["task"].replace("_", " ") for node in prediction_nodes]
        label_links, label_args = self._read_nodes(label_nodes, label_names, lambda node: node["arguments"])
        prediction_links, prediction_args = self._read_nodes(
            prediction_nodes, prediction_names, lambda node: node.get("arguments", [])
        )
        if not all(isinstance(name, str) for name in prediction_names):
            raise TypeError("a predicted task name is not a string")
        return (_graph(label_names, label_links, label_args),
                _graph(prediction_names, prediction_links, prediction_args))

    def _read_nodes(self, nodes: list[Any], names: list[str], arguments_of) -> tuple[list, list]:
        links, all_arguments = [], []
        for index, node in enumerate(nodes):
            read = []
            for argument in arguments_of(node):
                try:
                    entry = self._read_argument(argument, index, names, node, links)
                    if entry is None:  # a reference to the node itself
                        continue
                    self.last = entry
                except Exception:
                    if self.last is None:  # evaluate.py: unbound variable, the sample fails
                        raise
                read.append(self.last)
            all_arguments.append(read)
        return links, all_arguments

    def _read_argument(self, argument: Any, index: int, names: list[str], node: Mapping[str, Any],
                       links: list[tuple[str, str]]) -> dict[str, str] | None:
        if isinstance(argument, dict):
            argument = list(argument.values())[0]
        if isinstance(argument, list):
            argument = " ".join(argument)
        if not isinstance(argument, str):
            raise TypeError("argument is not text")
        if "<node-" not in argument:
            return {"name": content_type(argument), "value": argument}
        start = argument.index("<node-") + 6
        end = argument.index(">")
        referenced = int(argument[start:end])
        if referenced == index:
            return None
        source = names[referenced]
        links.append((source, node["task"]))
        return {"name": self.output_types.get(source, "other"), "value": source}


def _graph(names: list[str], links: list[tuple[str, str]], arguments: list[list[dict]]) -> _Graph:
    arg_names, arg_values = [], []
    for task, node_arguments in zip(names, arguments):
        for argument in node_arguments:
            arg_names.append(f"{task}-{argument['name']}")
            arg_values.append(f"{task}-{argument['name']}-{argument['value']}")
    return _Graph(names, links, arg_names, arg_values)


def content_type(content: str) -> str:
    """image / audio / video by a file extension anywhere in the text, else text (as TaskBench)."""
    content = content.strip("'")
    for kind, extensions in _EXTENSIONS:
        if any("." + ext in content for ext in extensions):
            return kind
    return "text"


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(precision: float, recall: float) -> float:
    return _ratio(2 * precision * recall, precision + recall)


def binary_f1(gold: Sequence[Iterable[Any]], predicted: Sequence[Iterable[Any]]) -> float:
    """F1 of per-sample sets (sklearn ``average="binary"`` on TaskBench's flattened vectors)."""
    tp = fp = fn = 0
    for g, p in zip(gold, predicted):
        g, p = set(g), set(p)
        tp += len(g & p)
        fp += len(p - g)
        fn += len(g - p)
    return _f1(_ratio(tp, tp + fp), _ratio(tp, tp + fn))


def _node_scores(gold: Sequence[list[str]], predicted: Sequence[list[str]], tool_names: list[str]):
    """Micro precision/recall/F1 and macro (P, R, F1) over the known tools, per-sample sets."""
    known = set(tool_names)
    counts = {name: [0, 0, 0] for name in tool_names}  # tp, fp, fn
    for g, p in zip(gold, predicted):
        g, p = set(g) & known, set(p) & known
        for name in g & p:
            counts[name][0] += 1
        for name in p - g:
            counts[name][1] += 1
        for name in g - p:
            counts[name][2] += 1
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    per_tool = []
    for t, f_p, f_n in counts.values():
        p, r = _ratio(t, t + f_p), _ratio(t, t + f_n)
        per_tool.append((p, r, _f1(p, r)))
    macro = tuple(sum(row[i] for row in per_tool) / len(per_tool) for i in range(3))
    return precision, recall, _f1(precision, recall), macro


def sequence_ratio(a: Sequence[Any], b: Sequence[Any]) -> float:
    """``Levenshtein.ratio`` on sequences: 1 - indel distance / total length (1.0 for two empty)."""
    total = len(a) + len(b)
    if not total:
        return 1.0
    return 2 * _lcs_length(a, b) / total


def _lcs_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def load_predictions(path: str | Path) -> dict[str, dict[str, Any]]:
    """A TaskBench predictions file (JSONL ``{"id", "result": {...}}``): id -> row, the last row wins."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"predictions file {path} not found")
    predictions = {}
    for line_no, line in numbered_lines(path):
        try:
            row = json.loads(line)
            predictions[str(row["id"])] = row
        except (json.JSONDecodeError, KeyError, TypeError):
            raise DatasetError(f"{path.name} line {line_no}: not a prediction row with an id") from None
    return predictions


def score_files(data_dir: str | Path, predictions_path: str | Path) -> dict[str, GroupScore]:
    """Score a predictions file against a TaskBench folder (what ``hugginggpt score`` does)."""
    from hugginggpt.eval.taskbench import load_taskbench

    dataset = load_taskbench(data_dir)
    return score(dataset.records, load_predictions(predictions_path), list(dataset.tools.values()))
