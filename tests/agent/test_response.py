"""The response stage's view of a run: what the LLM is shown, and the hallucinated-path check."""

from __future__ import annotations

from hugginggpt.agent.plan import Plan, PlanTask
from hugginggpt.agent.answer_check import known_files, unknown_paths
from hugginggpt.agent.response import predictions_text


def test_predictions_show_references_as_task_outputs_and_failures_with_reasons():
    plan = Plan(tasks=[PlanTask(task="image-to-text", id=0, args={"image": "a.jpg"}),
                       PlanTask(task="text-to-speech", id=1, dep=[0], args={"text": "<resource>-0"})])
    outcomes = {0: {"status": "ok", "result": {"text": "a red house"}},
                1: {"status": "failed", "error": "text-to-speech: model x is not available"}}
    text = predictions_text(plan, {0: {"model": "org/cap"}}, outcomes)
    assert '{"text": "(output of task 0)"}' in text and "<resource>" not in text
    assert "model=org/cap" in text and "model=default model" in text
    assert "prediction: text: a red house" in text
    assert "failed: text-to-speech: model x is not available" in text


def test_paths_the_answer_invents_are_found():
    files = known_files({0: {"status": "ok", "result": {"audio": "/runs/r1/outputs/abc.wav"}}}, ["/in/a.jpg"])
    answer = "I read it aloud into /runs/r1/outputs/abc.wav and also saved /runs/r1/outputs/speech.wav from /in/a.jpg."
    assert unknown_paths(answer, files) == ["/runs/r1/outputs/speech.wav"]


def test_a_home_path_of_no_user_is_an_invented_path_not_a_crash():
    files = known_files({0: {"status": "ok", "result": {"image": "/runs/r1/outputs/abc.png"}}}, [])
    answer = "The picture is at ~no-such-user-hgpt/cat.png and at /runs/r1/outputs/abc.png."
    assert unknown_paths(answer, files) == ["~no-such-user-hgpt/cat.png"]


def test_failures_are_reported_from_the_outcomes_with_what_to_do():
    from hugginggpt.agent.response import failure_report

    outcomes = {
        0: {"task": "sentence-similarity", "status": "failed",
            "error": "sentence-similarity: cannot download org/m from the Hub: connection refused",
            "error_type": "ModelLoadError"},
        1: {"task": "text-to-speech", "status": "skipped", "error": "skipped: task 0 (sentence-similarity) failed"},
        2: {"task": "summarization", "status": "ok", "result": {"text": "short"}},
        3: {"task": "image-to-text", "status": "failed", "error": "image-to-text: image: not an image file",
            "error_type": "ResourceError"},
    }
    report = failure_report(outcomes).splitlines()
    assert report[0].startswith("- Task 0 (sentence-similarity) failed: sentence-similarity: cannot download org/m")
    for remedy in ("--local-model sentence-similarity=DIR", "--endpoint URL", "HF_TOKEN"):
        assert remedy in report[0]
    assert report[1] == "- Task 1 (text-to-speech) was skipped: it needs the output of task 0 (sentence-similarity) failed."
    assert report[2] == "- Task 3 (image-to-text) failed: image-to-text: image: not an image file."  # not a model problem
    assert len(report) == 3  # the task that succeeded is the LLM's to describe
    assert failure_report({2: outcomes[2]}) == ""


def test_the_llm_sees_only_what_succeeded_and_static_instructions_first():
    from hugginggpt.agent.response import response_messages

    plan = Plan(tasks=[PlanTask(task="summarization", id=0, args={"text": "long text"}),
                       PlanTask(task="translation", id=1, dep=[0], args={"text": "<resource>-0"})])
    outcomes = {0: {"task": "summarization", "status": "ok", "result": {"text": "short"}},
                1: {"task": "translation", "status": "failed", "error": "translation: no model"}}
    system, human = response_messages("Summarize and translate", plan, {}, outcomes)
    assert "Task 0 summarization" in human.content and "Task 1" not in human.content
    assert "no model" not in system.content + human.content
    assert "$" not in system.content and "Summarize and translate" not in system.content  # static: cacheable


def test_the_llm_is_given_the_generated_files_as_a_list_and_models_on_this_machine_by_name():
    """A first run listed the GGUF's full path as a "generated file": the prompt now names a local model
    by its file name, and lists what the tasks made (or says none)."""
    from hugginggpt.agent.response import model_label, response_messages

    plan = Plan(tasks=[PlanTask(task="summarization", id=0, args={"text": "long text"}),
                       PlanTask(task="text-to-speech", id=1, dep=[0], args={"text": "<resource>-0"}),
                       PlanTask(task="text-to-image", id=2, args={"text": "a fox"})])
    outcomes = {0: {"task": "summarization", "status": "ok", "result": {"text": "short"}},
                1: {"task": "text-to-speech", "status": "ok", "result": {"audio": "/runs/r1/outputs/a.wav"}},
                2: {"task": "text-to-image", "status": "failed", "error": "no model"}}
    selections = {0: {"model": "/root/.cache/hugginggpt-gguf/qwen2.5-1.5b-q4_k_m.gguf"}, 1: {"model": "org/tts"}}
    _, human = response_messages("Summarize, read it aloud, draw a fox", plan, selections, outcomes)
    assert "model=qwen2.5-1.5b-q4_k_m.gguf" in human.content and "/root/.cache" not in human.content
    assert "model=org/tts" in human.content
    assert human.content.rstrip().endswith("Files the tasks generated:\n- /runs/r1/outputs/a.wav")
    _, human = response_messages("Summarize", Plan(tasks=plan.tasks[:1]), selections, {0: outcomes[0]})
    assert human.content.rstrip().endswith("Files the tasks generated:\nnone")
    assert [model_label(m) for m in ("gguf:/m/x.gguf", "~/models/blip/", "Salesforce/blip", "C:\\m\\y", None)] == [
        "x.gguf", "blip", "Salesforce/blip", "y", None]


async def test_no_llm_call_when_nothing_succeeded_and_invented_numbers_are_flagged():
    from langchain_core.messages import HumanMessage

    from hugginggpt.agent.response import arespond

    from .conftest import script

    failed = {0: {"task": "sentence-similarity", "status": "failed", "error": "sentence-similarity: model x is not available locally",
                  "error_type": "ModelLoadError"}}
    llm = script()  # any call fails
    answer, invented = await arespond(llm, [HumanMessage("x")], set(), {}, outcomes=failed)
    assert llm.prompts == [] and invented == []
    assert answer.startswith("I could not complete the request: no task produced a result.\n- Task 0 (sentence-similarity)")
    assert "--local-model sentence-similarity=DIR" in answer

    ok = {0: {"task": "sentence-similarity", "status": "ok", "result": {"data": [0.5321]}}}
    shown = [HumanMessage("Task 0 sentence-similarity\n  prediction: data: [0.5321]")]
    answer, _ = await arespond(script("It is 0.53 (53.21%), not 0.9000."), shown, set(), {}, outcomes=ok)
    assert answer == "It is 0.53 (53.21%), not 0.9000.\n\nNote: 0.9000 is not a result of any task."
