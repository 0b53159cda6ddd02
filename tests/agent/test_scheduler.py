"""The event-driven scheduler: references, parallelism, limits, failure propagation."""

import time

import pytest

from hugginggpt.agent.plan import describe_tools
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.agent.scheduler import Scheduler, substitute
from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources import Workspace


def scheduler_for(raw_plan, tools, tmp_path, events=None, **kwargs):
    tasks = describe_tools(list(tools.values()))
    plan, repairs = validate_plan(raw_plan, tasks)
    emit = (lambda name, **fields: events.append((name, fields.get("id")))) if events is not None else None
    return Scheduler(plan, tools, tasks, workspace=Workspace(tmp_path / "run"), emit=emit, **kwargs)


def test_substitute_several_references_lists_and_kinds():
    results = {0: {"text": "a cat"}, 1: {"image": "/ws/out.png", "data": [{"label": "cat"}]}, 2: {"data": {"n": 2}}}
    assert substitute("<resource>-0 next to <resource>-2", "text", results) == 'a cat next to {"n":2}'
    assert substitute(["<resource>-1", "plain", ["<resource>-0"]], "image", {**results, 0: {"image": "/a.png"}}) == [
        "/ws/out.png", "plain", ["/a.png"]]
    assert substitute(3, "number", results) == 3
    with pytest.raises(ResourceError, match=r"<resource>-0: the referenced result has no image output"):
        substitute("<resource>-0", "image", results, task="image-to-text")


async def test_chain_outputs_flow_into_arguments(tools, recorder, tmp_path):
    scheduler = scheduler_for([
        {"task": "echo", "id": 0, "args": {"text": "one"}},
        {"task": "echo", "id": 1, "args": {"text": "two"}},
        {"task": "echo", "id": 2, "args": {"text": "<resource>-0 and <resource>-1!"}},
    ], tools, tmp_path, selections={2: {"model": "org/shout"}})
    outcomes = await scheduler.run()
    assert outcomes[2] == {"task": "echo", "status": "ok", "result": {"text": "ONE AND TWO!"}, "error": None}
    last = recorder.calls[-1]
    assert last["args"] == {"text": "ONE and TWO!"}
    assert last["model"] == "org/shout" and last["workspace"] is scheduler.workspace


async def test_independent_tasks_overlap_and_dependants_wait(tools, recorder, tmp_path):
    scheduler = scheduler_for([
        {"task": "sleep", "id": 0, "args": {"seconds": 0.3}},
        {"task": "sleep", "id": 1, "args": {"seconds": 0.3}},
        {"task": "echo", "id": 2, "args": {"text": "<resource>-0"}},
    ], tools, tmp_path)
    started = time.perf_counter()
    outcomes = await scheduler.run()
    elapsed = time.perf_counter() - started
    a, b = [c for c in recorder.calls if c["task"] == "sleep"]
    assert max(a["start"], b["start"]) < min(a["end"], b["end"])  # the two sleeps overlapped
    assert elapsed < 0.55
    assert outcomes[2]["result"] == {"text": "SLEPT 0.3"}


async def test_max_concurrency_one_runs_serially(tools, recorder, tmp_path):
    scheduler = scheduler_for([
        {"task": "sleep", "id": 0, "args": {"seconds": 0.1}},
        {"task": "sleep", "id": 1, "args": {"seconds": 0.1}},
    ], tools, tmp_path, max_concurrency=1)
    await scheduler.run()
    a, b = sorted((c for c in recorder.calls), key=lambda c: c["start"])
    assert b["start"] >= a["end"]


async def test_failure_skips_dependants_and_others_finish(tools, tmp_path):
    events = []
    scheduler = scheduler_for([
        {"task": "object-detection", "id": 0, "args": {"image": "x.png"}},
        {"task": "echo", "id": 1, "args": {"text": "<resource>-0"}},
        {"task": "echo", "id": 2, "args": {"text": "<resource>-1"}},
        {"task": "echo", "id": 3, "args": {"text": "independent"}},
    ], tools, tmp_path, events=events)
    outcomes = await scheduler.run()
    assert outcomes[0]["status"] == "failed" and outcomes[0]["error"] == "object-detection: cannot read 'x.png'"
    assert outcomes[1] == {"task": "echo", "status": "skipped", "result": None,
                           "error": "skipped: task 0 (object-detection) failed"}
    assert outcomes[2]["error"] == "skipped: task 1 (echo) skipped"
    assert outcomes[3]["result"] == {"text": "INDEPENDENT"}
    assert ("task_failed", 0) in events and ("task_skipped", 1) in events and ("task_end", 3) in events
    assert ("task_start", 1) not in events


async def test_timeout_fails_the_task(tools, tmp_path):
    scheduler = scheduler_for([{"task": "sleep", "id": 0, "args": {"seconds": 5}}], tools, tmp_path, task_timeout=0.1)
    started = time.perf_counter()
    outcomes = await scheduler.run()
    assert outcomes[0]["error"] == "sleep: timed out after 0.1 s"
    assert time.perf_counter() - started < 1


async def test_missing_output_kind_fails_with_reason(tools, tmp_path):
    scheduler = scheduler_for([
        {"task": "echo", "id": 0, "args": {"text": "hi"}},
        {"task": "image-to-text", "id": 1, "args": {"image": "<resource>-0"}},
    ], tools, tmp_path)
    outcomes = await scheduler.run()
    assert outcomes[1]["status"] == "failed"
    assert "image-to-text: <resource>-0: the referenced result has no image output" in outcomes[1]["error"]
