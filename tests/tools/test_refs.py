"""The one ``<resource>-N`` pattern (``tools/resources/refs.py``): every spelling that the plan
validator, the tools, the tool-loop agents and the TaskBench mapping accept, in one place."""

from __future__ import annotations

import pytest

from hugginggpt.agent.plan import canonical_refs
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.tools.resources.refs import (
    CANONICAL_REF,
    RESOURCE_REF,
    contains_resource_ref,
    ref_ids,
)


def resource_ref_id(value: object) -> int | None:
    """The task id when ``value`` is exactly one reference (a test helper over the one pattern)."""
    match = RESOURCE_REF.fullmatch(value.strip()) if isinstance(value, str) else None
    return int(match["id"]) if match else None

ACCEPTED = [
    ("<resource>-3", 3),  # canonical
    ("<resource> - 3", 3),
    ("<resource>3", 3),
    ("<resource>-3>", 3),  # a stray closing ">"
    ("<resource-3>", 3),
    ("<resource_3>", 3),
    ("<resource-3", 3),  # the closing ">" missing
    ("<resource-3 >", 3),
    ("< resource >-3", 3),
    ("<Resource>-3", 3),
    ("<RESOURCE-3>", 3),
    ("<node-3>", 3),  # TaskBench
    ("<node>-3", 3),
    ("<node_3>", 3),
    ("<Node-3>", 3),
    ("<resource>-12", 12),
]
REFUSED = ["resource-1", "<resource>", "$1", "<resource>--1", "<node--1>", "<resources-1>", "<resource>-", "{1}",
           "<resource>-x", "<res-1>", "#1"]


@pytest.mark.parametrize("spelling, task_id", ACCEPTED)
def test_every_accepted_spelling_is_one_reference(spelling: str, task_id: int):
    assert resource_ref_id(spelling) == task_id
    assert RESOURCE_REF.search(f"see {spelling}, then")["id"] == str(task_id)
    assert contains_resource_ref(f"x {spelling} y")
    assert canonical_refs(spelling) == f"<resource>-{task_id}"
    assert canonical_refs({"a": [f"x {spelling} y"]}) == {"a": [f"x <resource>-{task_id} y"]}


@pytest.mark.parametrize("text", REFUSED)
def test_other_text_is_not_a_reference(text: str):
    assert resource_ref_id(text) is None
    assert canonical_refs(text) == text
    assert ref_ids(text) == []


def test_text_after_a_reference_is_kept():
    assert canonical_refs("<resource>-0 > 0.5") == "<resource>-0 > 0.5"
    assert canonical_refs("a <resource-0>b, <node-1> and <resource>2.") == "a <resource>-0b, <resource>-1 and <resource>-2."


def test_the_canonical_pattern_is_only_the_canonical_spelling():
    assert ref_ids("<resource>-1 <resource-2> <resource>-30") == [1, 30]
    assert CANONICAL_REF.fullmatch("<resource>-4")["id"] == "4"


def test_the_taskbench_mapping_reads_node_references_and_writes_them_back():
    mapping = TaskBenchMapping.__new__(TaskBenchMapping)
    nodes = [{"task": "Image Classification"}, {"task": "Text-to-Speech"}]
    deps: set[int] = set()
    mapping.output_kind = lambda task: "text"
    assert mapping._read_value("Labels: <node-0>", nodes, deps)[1] == "Labels: <resource>-0"
    assert mapping._read_value("<node-7>", nodes, deps)[1] == "<node-7>"  # out of range: left as written
    assert mapping._read_value("<node--1>", nodes, deps)[1] == "<node--1>"
    assert deps == {0}
