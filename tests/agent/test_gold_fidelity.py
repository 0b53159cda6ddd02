"""Correct plans survive validation: a plan that can run as written comes back from the passes unchanged.

- Every clean gold graph of ``../shared/taskbench`` (dev and test: all nodes domain tools, none reading
  its own output) that can run as written (``plan.check.problems``), validated with its request in
  English and in the translated sets' languages, comes back unchanged.
- Every gold plan of our real-request set (``benchmarks/data/real_requests.jsonl``) can run as written
  and comes back unchanged, with all tasks offered.
- Random runnable plans (hypothesis) come back unchanged, whatever language the request is in.
- Every one of those gold plans can be written under the grammar the embedded model decodes the plan with
  (the schema made for its request: ``tools/schemas.kind_states``): no correct plan is out of reach.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hugginggpt.agent.plan import validate_plan
from hugginggpt.agent.plan.check import problems, repeated_steps
from hugginggpt.agent.plan.context import PlanContext, given_files, request_inputs
from hugginggpt.agent.plan.model import refs_in, replace_refs
from hugginggpt.agent.plan.parse import plan_schema, read_plan, written_plan
from hugginggpt.agent.plan.prompt import request_context
from hugginggpt.agent.request import AgentRequest
from hugginggpt.tools.table import task_table
from tests.shared import shared_path

from .conftest import follows

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
TABLE = task_table()
ALL_TASKS = dict(TABLE)


def _core(plan: list[dict]) -> list[dict]:
    return [{"task": t["task"], "id": t["id"], "args": t["args"]} for t in plan]


@pytest.fixture(scope="module")
def taskbench():
    from hugginggpt.eval.mapping import TaskBenchMapping
    from hugginggpt.eval.taskbench import load_taskbench

    root = shared_path("taskbench")
    if not (root / "data.json").is_file():
        pytest.skip(f"TaskBench sample not found at {root}")
    dataset = load_taskbench(root)
    mapping = TaskBenchMapping(dataset.tools)
    known = mapping.domain_specs()
    clean = {}
    for sample in dataset.samples:
        if not all(mapping.to_task(str(node.get("task", ""))) for node in sample.nodes):
            continue
        plan = mapping.sample_to_plan(sample.nodes)
        if any(step["id"] in refs_in(step["args"]) for step in plan):
            continue  # a node reading its own output: no gold a planner could be held to
        clean[sample.id] = (sample, plan)
    return dataset, known, clean


def _runnable(plan: list[dict], known: dict, request: str) -> bool:
    read, _ = read_plan(plan)
    return not problems(read, PlanContext.of(known, request))


def test_every_runnable_taskbench_gold_graph_comes_back_unchanged(taskbench):
    _, known, clean = taskbench
    runnable = {i: (s, p) for i, (s, p) in clean.items() if _runnable(p, known, s.request)}
    assert len(clean) >= 400 and len(runnable) >= 0.9 * len(clean), (len(clean), len(runnable))
    changed = {}
    for sample_id, (sample, plan) in runnable.items():
        validated, repairs = validate_plan(plan, known, sample.request)
        if _core(validated.as_list()) != _core(plan):
            changed[sample_id] = [r["reason"] for r in repairs]
    assert changed == {}


def test_no_gold_plan_does_the_work_of_one_step_twice(taskbench):
    """The planner asks again for a plan with two steps doing the same work: no correct plan has them."""
    _, _, clean = taskbench
    plans = {i: plan for i, (_, plan) in clean.items()} | {row["id"]: row["plan"] for row in _real_requests()}
    assert len(plans) >= 500
    repeated = {i: repeated_steps(read_plan(plan)[0]) for i, plan in plans.items()}
    assert {i: pairs for i, pairs in repeated.items() if pairs} == {}


def _in_order(plan: list[dict]) -> list[dict]:
    """The plan with each task after the tasks it reads, numbered again in that order, as the planner is asked
    to write it (TaskBench's gold graphs number their nodes in any order)."""
    ordered: list[dict] = []
    while len(ordered) < len(plan):
        done = {step["id"] for step in ordered}
        ordered.append(next(s for s in plan if s["id"] not in done and refs_in(s["args"]) <= done))
    number = {step["id"]: i for i, step in enumerate(ordered)}
    return [{**step, "id": number[step["id"]], "args": replace_refs(step["args"], number)} for step in ordered]


def _writable(plan: list[dict], known: dict, context: str, files: tuple[str, ...] = ()) -> bool:
    """Whether the plan, written in order as the planner writes it, follows the states of its request's plan
    schema."""
    schema = plan_schema(known, request_inputs(context, files))
    return follows(schema, written_plan([{"step": "do it", **step} for step in _in_order(plan)]))


def test_every_runnable_taskbench_gold_graph_can_be_written_under_the_grammar_of_its_request(taskbench):
    _, known, clean = taskbench
    runnable = {i: (s, p) for i, (s, p) in clean.items() if _runnable(p, known, s.request)}
    assert len(runnable) >= 360
    assert [i for i, (sample, plan) in runnable.items() if not _writable(plan, known, sample.request)] == []


def test_every_real_request_gold_plan_can_be_written_under_the_grammar_of_its_request():
    out_of_reach = []
    for row in _real_requests():
        request = AgentRequest.parse({"input": row["request"], "files": row.get("files") or [],
                                      "chat_history": row.get("history") or []})
        context = request_context(request.input, request.files, request.chat_history)
        if not _writable(row["plan"], ALL_TASKS, context, tuple(request.files)):
            out_of_reach.append(row["id"])
    assert out_of_reach == []


def test_gold_graphs_that_cannot_run_keep_their_tasks_unless_one_is_rejected(taskbench):
    """A gold graph that cannot run as written (TaskBench's are model-written: placeholders such as
    '<output of Text-to-Image>', a question in an image slot) keeps every task the passes do not reject."""
    _, known, clean = taskbench
    for sample, plan in clean.values():
        validated, repairs = validate_plan(plan, known, sample.request)
        rejected = {r["task_id"] for r in repairs if r["reason"].startswith("rejected")}
        assert [t.task for t in validated.tasks] == [s["task"] for s in plan if s["id"] not in rejected]


@pytest.mark.parametrize("lang", ["zh", "es"])
def test_gold_graphs_come_back_unchanged_with_their_translated_requests(taskbench, lang):
    dataset, known, clean = taskbench
    path = DATA / f"taskbench-{lang}.jsonl"
    translated = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(translated) >= 80
    checked = 0
    for row in translated:
        if row["id"] not in clean:
            continue
        english, plan = clean[row["id"]]
        if not _runnable(plan, known, english.request):
            continue
        validated, repairs = validate_plan(plan, known, row["user_request"])
        assert _core(validated.as_list()) == _core(plan), (row["id"], [r["reason"] for r in repairs])
        checked += 1
    assert checked >= 0.65 * len(translated)  # the rest: non-domain tools, or a gold that cannot run


def _real_requests() -> list[dict]:
    path = DATA / "real_requests.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_real_request_gold_plan_can_run_and_comes_back_unchanged():
    rows = _real_requests()
    assert len(rows) >= 120
    for row in rows:
        request = AgentRequest(input=row["request"], files=row.get("files") or []).user_text()
        history = " ".join(turn["content"] for turn in row.get("history") or [])
        given = given_files(request, tuple(row.get("files") or []))
        read, _ = read_plan(row["plan"])
        assert problems(read, PlanContext.of(ALL_TASKS, f"{history}\n{request}", given=given)) == [], row["id"]
        validated, repairs = validate_plan(row["plan"], ALL_TASKS, f"{history}\n{request}", given=given)
        assert _core(validated.as_list()) == _core(row["plan"]), (row["id"], [r["reason"] for r in repairs])


# ----- random runnable plans -----

_FILES = {"image": ["photo.jpg", "scan.png"], "audio": ["talk.wav"], "video": ["clip.mp4"]}
_TEXTS = ["a red fox in the snow", "Bonjour tout le monde", "今天天气很好", "¿Dónde está la estación?",
          "مرحبا بالعالم", "🙂 emoji text", "{not a placeholder: in the request}"]
_REQUESTS = ["Please do it: {files}; {texts}", "请处理 {files}，还有 {texts}。", "Hazlo con {files} y {texts}",
             "هذا طلب {files} {texts}"]


@st.composite
def runnable_plans(draw):
    """A plan whose every value is a request file, a request text or a whole reference to an earlier
    task making the argument's kind, no step repeating another; the request (in one of several
    languages) names those files and texts."""
    names = sorted(ALL_TASKS)
    plan: list[dict] = []
    marks: list[str] = []  # the marks a text of the plan needs: the request writes them
    for task_id in range(draw(st.integers(1, 6))):
        info = ALL_TASKS[draw(st.sampled_from(names))]
        args = {}
        for arg in info.args:
            if not arg.required and not draw(st.booleans()):
                continue
            kind = arg.value_kind
            producers = [s["id"] for s in plan if ALL_TASKS[s["task"]].produces(kind)]
            if (kind == "image" and info.outputs == ["image"] and not info.draws_on_map
                    and any(a.kind == "text" for a in info.args)):
                # an edit or restyling of a condition map is no correct plan: its drawing task draws along it
                producers = [p for p in producers if not ALL_TASKS[plan[p]["task"]].drawn_by]
            if kind == "image" and "image" in info.outputs and ("data" in info.outputs or info.drawn_by or any(
                    s.map_by == info.name for s in ALL_TASKS.values())):
                # an analysis or a map of the picture the same task drew is no correct plan (check.own_marks)
                producers = [p for p in producers if plan[p]["task"] != info.name]
            if kind == "image" and info.draws_on_map:
                # a drawing along a condition map reads a map: never a photo the user gives, a generated
                # picture or another drawing
                options = [f"<resource>-{p}" for p in producers if ALL_TASKS[plan[p]["task"]].drawn_by]
                if not options:
                    break
            elif kind in _FILES:
                options = _FILES[kind] + [f"<resource>-{p}" for p in producers]
            elif kind == "text":
                texts = [f"{t} {arg.marks[0]}" for t in _TEXTS] if arg.marks else _TEXTS  # fill-mask: a mask token
                if arg.marks:  # a mark comes from the words or from a written text, never from labels or scores
                    producers = [p for p in producers if set(ALL_TASKS[plan[p]["task"]].outputs) == {"text"}]
                    marks.append(arg.marks[0])
                options = texts + [f"<resource>-{p}" for p in producers]
            elif arg.kind == "choice":
                options = list(arg.choices)
            elif kind == "number":
                args[arg.name] = draw(st.integers(1, 5))
                continue
            else:
                continue  # tables: not generated
            value = draw(st.sampled_from(options))
            args[arg.name] = [value] if arg.kind == "list" else value
        if any(a.required and a.name not in args for a in info.args):
            continue
        if any(s["task"] == info.name and s["args"] == args for s in plan):
            continue  # the same analysis twice is no correct plan (the repeats pass takes it out)
        plan.append({"task": info.name, "id": len(plan), "args": args})
    # a condition map nothing reads beside an edit of another photo, with no drawing along a map, is no correct
    # plan: a map alone is the result, and a pair's drawing reads its map (preference.edits_beside_unread_maps)
    read_ids = set().union(*(refs_in(s["args"]) for s in plan))
    specs = [ALL_TASKS[s["task"]] for s in plan]
    photos = [next((v for a in spec.args if a.kind == "image" and not refs_in(v := s["args"].get(a.name, ""))), None)
              for s, spec in zip(plan, specs)]
    unread_maps = {p for s, spec, p in zip(plan, specs, photos) if spec.drawn_by and p and s["id"] not in read_ids}
    edited = {p for spec, p in zip(specs, photos) if p and spec.outputs == ["image"] and not spec.draws_on_map
              and any(a.kind == "text" for a in spec.args)}
    assume(not (unread_maps and edited - unread_maps and not any(spec.draws_on_map for spec in specs)))
    # the request writes its files as a list: the same task on two of them, one of the two read further and
    # the other not, is no correct plan; what is done to one item of a list is done to each
    # (preference.each_listed_file)
    readers = {s["id"]: [o for o in plan if s["id"] in refs_in(o["args"])] for s in plan}
    for name in {s["task"] for s in plan}:
        alike = [s for s, p in zip(plan, photos) if s["task"] == name and p]
        assume(not (len(alike) > 1 and 0 < sum(bool(readers[s["id"]]) for s in alike) < len(alike)))
    template = draw(st.sampled_from(_REQUESTS))
    # the request gives the files its plan reads (a file the user gives and no task reads is a planning
    # error: the planner re-asks, and the listed-files pass repeats a reader for each file of a list)
    read = json.dumps(plan)
    files = [f for fs in _FILES.values() for f in fs if f'"{f}"' in read]
    texts = _TEXTS + [f"{t} {mark}" for mark in dict.fromkeys(marks) for t in _TEXTS]
    request = template.format(files=", ".join(files), texts=" | ".join(texts))
    return plan, request


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runnable_plans())
def test_random_runnable_plans_come_back_unchanged(case):
    plan, request = case
    read, _ = read_plan(plan)
    assert problems(read, PlanContext.of(ALL_TASKS, request)) == []
    validated, repairs = validate_plan(plan, ALL_TASKS, request)
    assert _core(validated.as_list()) == _core(plan), [r["reason"] for r in repairs]
    assert all(not r["reason"].startswith("rejected") for r in repairs)
    assert _writable(plan, ALL_TASKS, request)
