"""StageProgress turns stage events into task rows and plain lines."""

from __future__ import annotations

import io

from rich.console import Console

from hugginggpt.cli.progress import StageProgress

EVENTS = [
    {"event": "plan", "plan": [{"id": 0, "task": "image-to-text", "step": "describe the photo"},
                               {"id": 1, "task": "translation"},
                               {"id": 2, "task": "text-to-speech"}]},
    {"event": "selection", "id": 0, "task": "image-to-text", "model": "org/captioner"},
    {"event": "task_start", "id": 0, "task": "image-to-text"},
    {"event": "task_end", "id": 0, "task": "image-to-text", "result": {"text": "a cat"}, "seconds": 1.25},
    {"event": "task_failed", "id": 1, "task": "translation", "error": "translation: model not available"},
    {"event": "task_skipped", "id": 2, "task": "text-to-speech", "reason": "depends on failed task 1"},
    {"event": "response", "output": "done"},
]


def run(live: bool) -> tuple[StageProgress, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=live, color_system=None)
    with StageProgress(console, live=live) as progress:
        for event in EVENTS:
            progress.update(event)
    return progress, buffer.getvalue()


def test_rows_follow_the_events():
    progress, _ = run(live=False)
    assert [(r.task, r.status) for r in progress.rows.values()] == [
        ("image-to-text", "ok"), ("translation", "failed"), ("text-to-speech", "skipped")]
    assert progress.rows[0].model == "org/captioner" and progress.stage == "done"


def test_plain_lines():
    _, text = run(live=False)
    assert text.splitlines() == [
        "plan: 3 task(s) 0:image-to-text (describe the photo), 1:translation, 2:text-to-speech",
        "task 0 image-to-text: model org/captioner",
        "task 0 image-to-text: started",
        "task 0 image-to-text: ok (1.2s): a cat",
        "task 1 translation: failed: translation: model not available",
        "task 2 text-to-speech: skipped: depends on failed task 1",
        "response: ready",
    ]


def test_live_table_shows_the_planners_words_until_a_task_has_an_outcome():
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    with StageProgress(console, live=True) as progress:
        progress.update(EVENTS[0])
        assert progress.rows[0].detail == "describe the photo" and progress.rows[1].detail == ""
        for event in EVENTS[1:4]:
            progress.update(event)
    assert progress.rows[0].detail == "a cat"


def test_live_table_ends_with_every_task():
    _, text = run(live=True)
    final = text.split("hugginggpt: ")[-1]
    assert final.startswith("done")
    for word in ("image-to-text", "org/captioner", "failed", "skipped", "1.2s"):
        assert word in final


def test_selection_event_of_the_global_agent_lists_each_task_model():
    from hugginggpt.cli.progress import describe

    event = {"event": "selection", "selections": {0: {"model": "org/captioner", "reason": "r"},
                                                  1: {"model": "org/tts", "reason": "r"}}}
    assert describe(event) == "task 0: model org/captioner\ntask 1: model org/tts"
    assert describe({"event": "selection", "selections": {}}) is None
