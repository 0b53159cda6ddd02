"""Load a TaskBench domain folder (``tool_desc.json``, ``graph_desc.json``, ``data.json``).

Real TaskBench data comes in several shapes: upstream's ``tool_nodes``/``tool_links``/``tool_steps``
or a fork's ``task_*``, node lists as lists or as JSON strings, the request as ``user_request`` or
``instruction`` (a paraphrase; the official text lives in ``user_requests.json``). This module
accepts them all and reports a malformed sample instead of failing on it. The raw rows are kept
as well, because scoring must see them exactly as TaskBench's ``evaluate.py`` does.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from hugginggpt.errors import DatasetError
from hugginggpt.eval.jsonl import numbered_lines

GRAPH_TYPES = ("single", "chain", "dag")

# upstream name -> the name this module uses
_FIELD_ALIASES = {"tool_nodes": "task_nodes", "tool_links": "task_links", "tool_steps": "task_steps"}


@dataclass(frozen=True)
class TaskBenchSample:
    """One request with its ground-truth tool graph (nodes in TaskBench's own tool names)."""

    id: str
    request: str
    type: str  # single | chain | dag
    n_tools: int
    nodes: list[dict[str, Any]]  # [{"task": name, "arguments": [value, ...]}]
    links: list[dict[str, str]]  # [{"source": name, "target": name}]
    steps: list[str] = field(default_factory=list)


@dataclass
class TaskBenchDataset:
    """A loaded domain: its tools, tool graph, samples, raw rows and the problems found."""

    root: Path
    tools: dict[str, dict[str, Any]]  # tool name -> {"id", "desc", "input-type", "output-type"}
    tool_links: list[dict[str, Any]]
    samples: list[TaskBenchSample]
    records: list[dict[str, Any]]  # every row as read (malformed ones too), normalised field names
    problems: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[TaskBenchSample]:
        return iter(self.samples)

    def get(self, sample_id: str) -> TaskBenchSample:
        for sample in self.samples:
            if sample.id == sample_id:
                return sample
        raise KeyError(sample_id)

    def select(self, types: Iterable[str] | None = None, limit: int | None = None,
               seed: int | None = None) -> list[TaskBenchSample]:
        """Samples of the given graph types; ``seed`` shuffles reproducibly before ``limit`` cuts."""
        wanted = set(types) if types else set(GRAPH_TYPES)
        chosen = [s for s in self.samples if s.type in wanted]
        if seed is not None:
            random.Random(seed).shuffle(chosen)
        return chosen[:limit] if limit is not None else chosen


def load_taskbench(root: str | Path) -> TaskBenchDataset:
    """Load a TaskBench domain folder; raises ``DatasetError`` when a required file is missing or unreadable."""
    root = Path(root)
    tool_desc = _read_json(root / "tool_desc.json")
    graph_desc = _read_json(root / "graph_desc.json")
    tools = {node["id"]: node for node in tool_desc.get("nodes", [])}
    requests = _official_requests(root / "user_requests.json")
    records, problems = _read_jsonl(root / "data.json")
    samples = []
    for line_no, record in records:
        try:
            samples.append(_sample(record, requests))
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"data.json line {line_no} (id {record.get('id')!r}): {_cause(exc)}")
    return TaskBenchDataset(
        root=root,
        tools=tools,
        tool_links=list(graph_desc.get("links", [])),
        samples=samples,
        records=[record for _, record in records],
        problems=problems,
    )


def _cause(exc: Exception) -> str:
    return f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path.name} not found in {path.parent}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not readable JSON ({exc})") from None


def _read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Rows of a JSONL file as (line number, normalised dict); unreadable lines become problems."""
    if not path.is_file():
        raise DatasetError(f"{path.name} not found in {path.parent}")
    rows, problems = [], []
    for line_no, line in numbered_lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name} line {line_no}: not JSON ({exc.msg})")
            continue
        if not isinstance(row, dict) or "id" not in row:
            problems.append(f"{path.name} line {line_no}: not an object with an id")
            continue
        rows.append((line_no, normalise_record(row)))
    return rows, problems


def normalise_record(row: dict[str, Any]) -> dict[str, Any]:
    """Upstream field names mapped to ``task_*``, JSON-string fields parsed, the id as a string."""
    out = dict(row)
    for upstream, ours in _FIELD_ALIASES.items():
        if upstream in out and ours not in out:
            out[ours] = out.pop(upstream)
    for key in ("task_nodes", "task_links", "task_steps", "sampled_nodes", "sampled_links"):
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError:
                pass  # left as is: the sample check reports it
    out["id"] = str(out["id"])
    return out


def _official_requests(path: Path) -> dict[str, str]:
    """id -> request text from ``user_requests.json`` (JSONL), when the folder has it."""
    if not path.is_file():
        return {}
    rows, _ = _read_jsonl(path)
    return {row["id"]: row["user_request"] for _, row in rows if isinstance(row.get("user_request"), str)}


def _sample(record: dict[str, Any], requests: dict[str, str]) -> TaskBenchSample:
    request = requests.get(record["id"]) or record.get("user_request") or record.get("instruction")
    if not isinstance(request, str) or not request.strip():
        raise ValueError("no request text")
    nodes = [_node(node, i) for i, node in enumerate(_list_of(record, "task_nodes"))]
    if not nodes:
        raise ValueError("no task nodes")
    links = [_link(link) for link in _list_of(record, "task_links", default=[])]
    graph_type = record.get("type") or _infer_type(len(nodes), links)
    if graph_type not in GRAPH_TYPES:
        raise ValueError(f"unknown graph type {graph_type!r}")
    steps = record.get("task_steps") or []
    return TaskBenchSample(
        id=record["id"],
        request=request.strip(),
        type=graph_type,
        n_tools=int(record.get("n_tools") or len(nodes)),
        nodes=nodes,
        links=links,
        steps=[str(step) for step in steps] if isinstance(steps, list) else [str(steps)],
    )


def _list_of(record: dict[str, Any], key: str, default: list | None = None) -> list[Any]:
    value = record.get(key, default)
    if value is None and default is not None:
        return default
    if not isinstance(value, list):
        raise TypeError(f"{key} is {type(value).__name__}, not a list")
    return value


def _node(node: Any, index: int) -> dict[str, Any]:
    if not isinstance(node, dict) or not isinstance(node.get("task"), str):
        raise TypeError(f"node {index} has no task name")
    arguments = node.get("arguments", [])
    if not isinstance(arguments, list):
        arguments = [arguments]  # some rows hold one string instead of a list
    return {"task": node["task"], "arguments": [_argument_value(a) for a in arguments]}


def _argument_value(argument: Any) -> Any:
    """A single value: ``{"name": value}`` objects are unwrapped, as TaskBench does."""
    if isinstance(argument, dict) and argument:
        return next(iter(argument.values()))
    return argument


def _link(link: Any) -> dict[str, str]:
    if not isinstance(link, dict) or "source" not in link or "target" not in link:
        raise TypeError(f"link {link!r} lacks source or target")
    return {"source": str(link["source"]), "target": str(link["target"])}


def _infer_type(n_nodes: int, links: list[dict[str, str]]) -> str:
    if n_nodes == 1:
        return "single"
    targets = [link["target"] for link in links]
    sources = [link["source"] for link in links]
    is_chain = len(links) == n_nodes - 1 and len(set(targets)) == len(targets) == len(set(sources))
    return "chain" if is_chain else "dag"
