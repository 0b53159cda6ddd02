"""The response stage's view of a run: what the LLM is shown, and the hallucinated-path check."""

from __future__ import annotations

from hugginggpt.agent.plan import Plan, PlanTask
from hugginggpt.agent.response import known_files, predictions_text, unknown_paths


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
