"""Bounded work on hostile input (issue 13 items 3 and 4): the parsers that read what an LLM or a user
writes run in linear time, so one request cannot hold the interpreter for seconds and stall every
other run in the process.

Each test measures the CPU time of the calling thread (``time.thread_time``), which a loaded machine
does not inflate, on inputs of 100-200 KB; the quadratic patterns these replace needed 18-39 s for
60 KB. The bound (1 s) is the issue's goal figure and sits far above what linear code needs (a few ms).
"""

from __future__ import annotations

import time

import pytest

from hugginggpt.agent.plan import canonical_refs
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.tools.resources.mentions import listed_files, media_kind_of, request_files
from hugginggpt.agent.answer_check import unknown_paths
from hugginggpt.tools.resources.refs import RESOURCE_REF, contains_resource_ref
from hugginggpt.tools.table import ArgSpec, TaskSpec

CPU_BOUND_S = 1.0
N = 100_000


def cpu_seconds(fn, *args) -> float:
    started = time.thread_time()
    fn(*args)
    return time.thread_time() - started


HOSTILE_REFERENCE_TEXTS = {
    "resource then spaces": "<resource>" + " " * N,
    "resource then spaces and a dash": "<resource>" + " " * N + "-" + " " * N + "x",
    "open resource then spaces": "<resource" + " " * N,
    "lt then spaces": "<" + " " * N,
    "dash form then spaces": "<resource-" + " " * N,
    "id then spaces": "<resource-1" + " " * N + "x",
    "many resources": "<resource> " * (N // 10),
    "many nodes": "<node>- " * (N // 8),
}


@pytest.mark.parametrize("text", HOSTILE_REFERENCE_TEXTS.values(), ids=[k.replace(" ", "-") for k in HOSTILE_REFERENCE_TEXTS])
def test_the_reference_pattern_runs_in_linear_time(text: str):
    assert cpu_seconds(lambda: list(RESOURCE_REF.finditer(text))) < CPU_BOUND_S
    assert cpu_seconds(contains_resource_ref, text) < CPU_BOUND_S
    assert cpu_seconds(canonical_refs, {"text": text}) < CPU_BOUND_S


@pytest.mark.parametrize("text", [
    "\\" * N,
    "C:\\" + "\\" * N + "x",
    "a" * N + ".png" + "x",
    "/".join(["a"] * (N // 2)) + "!",
    "~/" + "a-" * (N // 2),
], ids=["backslashes", "drive-then-backslashes", "long-word-before-a-suffix", "slashes", "home-then-dashes"])
def test_the_answer_path_check_runs_in_linear_time(text: str):
    assert cpu_seconds(unknown_paths, text, set()) < CPU_BOUND_S


@pytest.mark.parametrize("text", ["a" * N, "a" * N + ".png", "x." * N, "%~:" * (N // 3) + "y",
                                  "一a" * (N // 2) + ".png", "一" * N + "a.png一", "a.png一" * (N // 6),
                                  "".join(f"a{i}.png, " for i in range(N // 8))],
                         ids=["long-word", "long-word-with-suffix", "dots", "path-characters", "scripts-alternating",
                              "unspaced-before-a-name", "glued-names", "a-long-list"])
def test_the_request_file_scan_runs_in_linear_time(text: str):
    assert cpu_seconds(request_files, text) < CPU_BOUND_S
    assert cpu_seconds(media_kind_of, text) < CPU_BOUND_S
    assert cpu_seconds(listed_files, text) < CPU_BOUND_S


def _task(name, description, arg, kind, outputs=()):
    """A task outside the table with one required argument ``arg`` of ``kind``."""
    return TaskSpec(name=name, description=description, outputs=list(outputs), in_table=False,
                    args=[ArgSpec(name=arg, kind=kind, required=True, description="")])


TASKS = {
    "image-to-text": _task("image-to-text", "caption", "image", "image", outputs=("text",)),
    "summarization": _task("summarization", "summarize", "text", "text", outputs=("text",)),
    "echo": _task("echo", "a tool whose output kinds are unknown", "text", "text"),
}


def test_a_long_request_and_argument_do_not_slow_plan_repair():
    words = "a" * N
    raw = [{"task": "image-to-text", "id": 0, "args": {"image": words + ".png"}},
           {"task": "summarization", "id": 1, "args": {"text": "[" + "output" * (N // 6)}}]
    assert cpu_seconds(validate_plan, raw, TASKS, words + " " + words) < CPU_BOUND_S


def test_a_long_task_name_is_rejected_without_fuzzy_matching_it_for_seconds():
    raw = [{"task": "image-to-text" + "x" * N, "id": 0, "args": {"image": "a.png"}}]
    assert cpu_seconds(validate_plan, raw, TASKS) < CPU_BOUND_S


def _chain(n: int) -> list[dict]:
    """Task i uses task i+1's output and the last task a task that does not exist; listed in id order,
    so each rejection reaches one task earlier in the list (what made the old cascade quadratic)."""
    return [{"task": "echo", "id": i, "args": {"text": f"<resource>-{i + 1}"}} for i in range(n)]


def _pipeline(n: int) -> list[dict]:
    return [{"task": "summarization", "id": 0, "args": {"text": "x"}}] + [
        {"task": "summarization", "id": i, "args": {"text": f"<resource>-{i - 1}"}} for i in range(1, n)]


def test_the_plan_size_is_capped_in_validation_with_a_recorded_repair():
    plan, repairs = validate_plan(_pipeline(300), TASKS)
    assert len(plan.tasks) == 10
    assert any("300 tasks" in r["reason"] and "10" in r["reason"] for r in repairs)
    plan, repairs = validate_plan(_pipeline(30), TASKS, max_tasks=20)
    assert len(plan.tasks) == 20


def test_the_rejection_cascade_is_linear_in_the_plan_size():
    """A 3,000-task chain whose last task is rejected: every task goes, in bounded time (16 s before)."""
    plan, repairs = validate_plan(_chain(3000), TASKS, max_tasks=None)
    assert plan.tasks == []
    assert sum("depends on rejected task" in r["reason"] for r in repairs) == 2999
    assert repairs[0]["reason"].endswith("uses the output of task(s) [3000], which do not exist")
    assert cpu_seconds(validate_plan, _chain(3000), TASKS, None, None) < 2 * CPU_BOUND_S


HOSTILE_REQUESTS = {
    "quotes": "\" 'a" * (N // 4),
    "right-to-left": "ترجم هذا الملف 'صورة.jpg' من فضلك " * (N // 34),
    "emoji": "🙂🐱‍👤 'x.png' " * (N // 12),
    "mixed scripts": "把 photo.jpg 翻译 translate Перевод 'текст' ", 
    "zero-width and bidi marks": "\u200b\u202e'a.wav'\u202c\u200d" * (N // 10),
}
HOSTILE_REQUESTS["mixed scripts"] *= N // len(HOSTILE_REQUESTS["mixed scripts"])


@pytest.mark.parametrize("request_text", HOSTILE_REQUESTS.values(), ids=list(HOSTILE_REQUESTS))
async def test_a_long_request_in_any_script_plans_in_bounded_time(request_text: str):
    from tests.agent.conftest import plan_with, script

    answer = [{"task": "image-to-text", "id": 0, "args": {"image": "x.png"}},
              {"task": "summarization", "id": 1, "args": {"text": "<resource>-0"}}]
    started = time.thread_time()  # the request's own file names (a.wav, photo.jpg) unread: re-asked once
    result = await plan_with(script(answer, answer), TASKS, request_text, files=["x.png"])
    assert time.thread_time() - started < CPU_BOUND_S
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "summarization"]
