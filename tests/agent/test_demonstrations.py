"""Demonstrations chosen per request by BM25 from our own pool."""

from __future__ import annotations

from hugginggpt.agent.plan.demonstrations import DemoSelector, select_demonstrations, tokens
from hugginggpt.prompts import load_demonstrations
from hugginggpt.tools import task_table

POOL = [
    {"kind": "single", "input": "Transcribe talk.wav", "plan": [{"task": "automatic-speech-recognition", "args": {}}]},
    {"kind": "single", "input": "Caption the photo cat.png", "plan": [{"task": "image-to-text", "args": {}}]},
    {"kind": "single", "input": "Caption the picture dog.png", "plan": [{"task": "image-to-text", "args": {}}]},
    {"kind": "chain", "input": "Caption the photo and read the caption aloud",
     "plan": [{"task": "image-to-text", "args": {}}, {"task": "text-to-speech", "args": {}}]},
    {"kind": "single", "input": "Compose a melody", "plan": [{"task": "text-to-audio", "args": {}}]},
]
ALL = {"automatic-speech-recognition", "image-to-text", "text-to-speech", "text-to-audio"}


def test_the_most_similar_come_last_without_repeating_a_task_sequence():
    chosen = DemoSelector(POOL).select("Caption my photo bird.png and read it aloud", ALL, k=3)
    inputs = [d["input"] for d in chosen]
    assert inputs[-1] == "Caption the photo and read the caption aloud"
    assert len(inputs) == 3 and len({tuple(s["task"] for s in d["plan"]) for d in chosen}) == 3
    assert "Caption the picture dog.png" not in inputs  # same plan shape as a better match


def test_only_demonstrations_with_available_tasks_and_k_bounds():
    selector = DemoSelector(POOL)
    chosen = selector.select("Compose a melody", {"image-to-text", "automatic-speech-recognition"}, k=4)
    assert all(s["task"] != "text-to-audio" for d in chosen for s in d["plan"])
    assert selector.select("anything", set(), k=4) == [] and selector.select("x", ALL, k=0) == []
    assert selector.select("Caption", ALL, k=2) == selector.select("Caption", ALL, k=2)  # deterministic


def test_fixed_demonstrations_come_first_for_every_request_then_the_chosen_ones():
    pool = [*POOL, {"kind": "chain", "input": "Transcribe talk.wav and read it aloud", "fixed": True,
                    "plan": [{"task": "automatic-speech-recognition", "args": {}}, {"task": "text-to-speech", "args": {}}]},
            {"kind": "single", "input": "Compose a song", "fixed": True, "plan": [{"task": "text-to-audio", "args": {}}]}]
    selector = DemoSelector(pool)
    caption = selector.select("Caption my photo bird.png and read it aloud", ALL, k=2)
    melody = selector.select("Compose a melody", ALL, k=2)
    fixed = ["Transcribe talk.wav and read it aloud", "Compose a song"]
    assert [d["input"] for d in caption[:2]] == fixed == [d["input"] for d in melody[:2]]  # the static prefix
    assert caption[-1]["input"] == "Caption the photo and read the caption aloud" and len(caption) == 4
    assert "Compose a melody" not in [d["input"] for d in melody]  # same task sequence as a fixed one
    assert [d["input"] for d in selector.select("anything", ALL, k=0)] == fixed
    # a fixed demonstration whose tasks are not all available is left out like any other
    assert [d["input"] for d in selector.select("x", ALL - {"text-to-audio"}, k=0)] == fixed[:1]


def test_tokens_drop_stop_words_and_keep_extensions():
    assert tokens("Please caption the image 'a.JPG'") == ["caption", "image", "jpg"]


def test_the_shipped_pool_covers_every_domain_task_and_multi_step_plans():
    pool = load_demonstrations()
    covered = {s["task"] for d in pool for s in d["plan"]}
    domain = {"token-classification", "translation", "summarization", "question-answering", "conversational",
              "text-generation", "sentence-similarity", "tabular-classification", "object-detection",
              "image-classification", "image-to-image", "image-to-text", "text-to-image", "text-to-video",
              "visual-question-answering", "document-question-answering", "image-segmentation",
              "depth-estimation", "text-to-speech", "automatic-speech-recognition", "audio-to-audio",
              "audio-classification", "image-text-to-image"}
    assert domain <= covered <= set(task_table())
    assert sum(len(d["plan"]) >= 3 for d in pool) >= 8
    fixed = [d for d in pool if d.get("fixed")]
    assert select_demonstrations("Describe beach.png for me and read the description aloud.", domain) == fixed
    picked = select_demonstrations("Describe beach.png for me and read the description aloud.", domain, k=1)
    assert [s["task"] for s in picked[-1]["plan"]] == ["image-to-text", "text-to-speech"]
    assert picked[: len(fixed)] == fixed and len(picked) == len(fixed) + 1
    assert all(step.get("step") for d in pool for step in d["plan"])  # every step says what it does first
    kinds = {d["kind"] for d in fixed}
    assert {"single", "chain", "dag"} <= kinds and len(fixed) <= 10  # diverse, and a bounded static prefix
