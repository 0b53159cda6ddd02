"""A step reading a file the user gives beside an earlier step that made a new version of it, read by nothing:
asked alone (both orders) whether it works on the file or on that result, and rewired only when both say result."""

import json
import re

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.chains import chain_cases, check_chains, reads_result
from hugginggpt.tools.table import map_makers
from hugginggpt.tools import task_table

from .conftest import SamplingChatModel, plan_with

KNOWN = task_table()


def step(i, task, step_words, **args):
    return {"step": step_words, "task": task, "id": i, "args": args}


ENHANCE = [step(0, "image-to-image", "enhance example.jpg", image="example.jpg", prompt="sharper"),
           step(1, "image-classification", "classify the enhanced image", image="example.jpg")]
DENOISE = [step(0, "audio-to-audio", "去掉 talk.wav 的杂音", audio="talk.wav"),
           step(1, "automatic-speech-recognition", "转成文字", audio="talk.wav"),
           step(2, "audio-classification", "说话人的情绪", audio="talk.wav")]


def test_a_step_beside_an_unread_new_version_of_its_file_is_a_case():
    (case,) = chain_cases(ENHANCE, KNOWN)
    assert case.maker["id"] == 0 and case.reader["id"] == 1 and case.arg == "image" and case.file == "example.jpg"
    assert [c.reader["id"] for c in chain_cases(DENOISE, KNOWN)] == [1, 2]  # each reader of the cleaned sound


@pytest.mark.parametrize("tasks", [
    # a depth map is an analysis of the picture, not a new version of it ("how deep is it? also segment it")
    [step(0, "depth-estimation", "depth", image="a.jpg"), step(1, "image-segmentation", "segment", image="a.jpg")],
    # a detection makes text: its boxed picture is not what it finds
    [step(0, "object-detection", "find", image="a.jpg"), step(1, "image-classification", "classify", image="a.jpg")],
    # the new version is read already
    [*ENHANCE, step(2, "image-to-text", "caption it", image="<resource>-0")],
    # another file
    [ENHANCE[0], step(1, "image-classification", "classify b.jpg", image="b.jpg")],
    # the reader comes first
    [step(0, "image-classification", "classify", image="example.jpg"),
     step(1, "image-to-image", "enhance", image="example.jpg", prompt="sharper")],
])
def test_other_plans_have_no_case(tasks):
    assert chain_cases(tasks, KNOWN) == []


def test_a_step_beside_two_new_versions_of_its_file_is_no_case():
    """Which one it reads is not for the plumbing to guess; the second edit beside the first is a case (upscale,
    then colorize)."""
    tasks = [ENHANCE[0], step(1, "image-text-to-image", "add a hat", image="example.jpg", prompt="a hat"),
             step(2, "image-classification", "classify", image="example.jpg")]
    assert [(c.maker["id"], c.reader["id"]) for c in chain_cases(tasks, KNOWN)] == [(0, 1)]


def test_map_makers_are_the_tasks_that_make_a_drawing_s_map():
    maps = map_makers(KNOWN)
    assert {"depth-estimation", "canny-control", "openpose-control", "image-segmentation"} <= maps
    assert not maps & {"image-to-image", "image-text-to-image", "audio-to-audio"}


def works_on(answer: str | None, log: list | None = None):
    """A scorer for the question: ``"result"`` or ``"file"`` leads; None: the first letter leads (a position)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        result = "A" if re.search(r"^A\) the result of", human, flags=re.M) else "B"
        pick = "A" if answer is None else result if answer == "result" else "AB"[result == "A"]
        return [1.0 if letter == pick else 0.0 for letter in letters]

    return scores


def test_the_result_counts_only_when_both_orders_pick_it():
    (case,) = chain_cases(ENHANCE, KNOWN)
    asked: list[str] = []
    assert reads_result(works_on("result", asked), "enhance example.jpg and classify it", case)
    assert 'A) example.jpg, as the user gave it\nB) the result of the earlier step "enhance example.jpg"' in asked[0]
    assert 'A) the result of the earlier step "enhance example.jpg"\nB) example.jpg, as the user gave it' in asked[1]
    assert "One step of it: classify the enhanced image" in asked[0]
    assert not reads_result(works_on("file"), "...", case)
    assert not reads_result(works_on(None), "...", case)


async def test_each_step_the_model_says_works_on_the_result_reads_it():
    answer = {"wants": ["text"], "tasks": DENOISE}
    data, repairs, asked = await check_chains(works_on("result"), "...", answer, KNOWN)
    assert [t["args"]["audio"] for t in data["tasks"]] == ["talk.wav", "<resource>-0", "<resource>-0"] and asked == 2
    assert [r["task_id"] for r in repairs] == [1, 2] and "works on that result" in repairs[0]["reason"]
    assert answer["tasks"][1]["args"]["audio"] == "talk.wav"  # the answer given is not changed in place
    data, repairs, asked = await check_chains(works_on("file"), "...", answer, KNOWN)
    assert data is answer and not repairs and asked == 2


class _Scoring(SamplingChatModel):
    def answer_scores(self, messages, answers):
        if "What does that step work on?" in messages[-1][1]:
            return works_on("result")(messages, answers)
        return [0.0 for _ in answers]  # another question (a twin's, a sibling's): a tie keeps the answer


async def test_the_planner_rewires_the_step_and_its_dependency():
    llm = _Scoring(responses=[AIMessage(json.dumps({"wants": ["text"], "tasks": ENHANCE}))])
    result = await plan_with(llm, KNOWN, "enhance example.jpg, then classify the enhanced image")
    classify = result.plan.tasks[1]
    assert classify.args["image"] == "<resource>-0" and classify.dep == [0]
    assert result.usage["input_checks"] == 1 and any(r["pass"] == "choice" for r in result.repairs)
