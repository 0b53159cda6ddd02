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


BLOCKS = [
    {"kind": "single", "input": "Compose a song", "block": True, "plan": [{"task": "text-to-audio", "args": {}}]},
    {"kind": "chain", "input": "Transcribe talk.wav and read it aloud", "block": True,
     "plan": [{"task": "automatic-speech-recognition", "args": {}}, {"task": "text-to-speech", "args": {}}]},
    {"kind": "single", "input": "Describe scene.jpg", "block": True, "plan": [{"task": "image-to-text", "args": {}}]},
    {"kind": "single", "input": "Caption clip.mp3's cover art.png", "block": True,
     "plan": [{"task": "image-to-text", "args": {}}]},
]


def test_the_block_for_the_requests_kinds_of_input_comes_first_then_the_chosen_ones():
    selector = DemoSelector([*POOL, *BLOCKS])
    caption = selector.select("Caption my photo bird.png and read it aloud", ALL, k=2)
    other = selector.select("Was ist auf strand.jpg zu sehen?", ALL, k=2)  # any language: the kinds are the files'
    melody = selector.select("Compose a melody", ALL, k=2)
    image_block = ["Compose a song", "Describe scene.jpg"]
    assert [d["input"] for d in caption[:2]] == image_block == [d["input"] for d in other[:2]]  # the static prefix
    assert caption[-1]["input"] == "Caption the photo and read the caption aloud" and len(caption) == 4
    assert [d["input"] for d in selector.select("anything", ALL, k=0)] == ["Compose a song"]  # no files: general only
    assert "Compose a melody" not in [d["input"] for d in melody]  # same task sequence as a block one
    # both kinds: the examples of each kind, and the one with exactly both
    assert [d["input"] for d in selector.select("Caption art.png and transcribe a.mp3", ALL, k=0)] == [
        "Compose a song", "Transcribe talk.wav and read it aloud", "Describe scene.jpg", "Caption clip.mp3's cover art.png"]
    # a block demonstration whose tasks are not all available is left out like any other
    assert [d["input"] for d in selector.select("x.png", ALL - {"text-to-audio"}, k=0)] == ["Describe scene.jpg"]


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
    blocks = [d for d in pool if d.get("block")]
    request = "Describe beach.png for me and read the description aloud."
    shown = select_demonstrations(request, domain)
    assert shown and all(d in blocks for d in shown)
    picked = select_demonstrations(request, domain, k=1)
    shape = [[s["task"] for s in d["plan"]] for d in picked]
    assert shape[-1] not in shape[:-1] and shape[-1][-1] == "text-to-speech"  # like the request, a new sequence
    assert picked[: len(shown)] == shown and len(picked) == len(shown) + 1
    assert all(step.get("step") for d in pool for step in d["plan"])  # every step says what it does first
    for files in ("", "a.png", "a.wav", "a.mp4", "a.csv", "a.png b.wav"):  # a bounded block for every kind of input
        block = select_demonstrations(f"Do it {files}", set(task_table()))
        assert 3 <= len(block) <= 16, (files, len(block))
    sizes = {min(len(d["plan"]), 3) for d in blocks}
    assert sizes == {0, 1, 2, 3}  # nothing to run, one task, two, three or more
    # a request without files sees chains of three steps too: a drawing read twice, a text shortened and read aloud
    general = select_demonstrations("Do it", set(task_table()))
    long = [[s["task"] for s in d["plan"]] for d in general if len(d["plan"]) >= 3]
    assert ["text-to-image", "object-detection", "image-to-video"] in long
    assert ["text-generation", "summarization", "text-to-speech"] in long
