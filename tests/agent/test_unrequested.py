"""Steps nobody asked for: a leaf that makes media of a kind the request never mentions is dropped."""

from __future__ import annotations

import pytest

from hugginggpt.agent.plan import task_info_from_spec
from hugginggpt.agent.plan_repair import validate_plan
from hugginggpt.agent.request_words import RequestWords
from hugginggpt.agent.unrequested import mentioned_kinds
from hugginggpt.tools import task_table


@pytest.fixture(scope="module")
def known():
    table = task_table()
    return {name: task_info_from_spec(table[name]) for name in table}


def step(task, n, **args):
    return {"task": task, "id": n, "args": args}


def test_a_speech_step_after_a_translation_is_dropped_with_a_reason(known):
    raw = [step("translation", 0, text="Where is the station?"), step("text-to-speech", 1, text="<resource>-0")]
    plan, repairs = validate_plan(raw, known, "Translate 'Where is the station?' into French.")
    assert [t.task for t in plan.tasks] == ["translation"]
    assert any("dropped: text-to-speech makes audio" in r["reason"] and r["task_id"] == 1 for r in repairs)


def test_the_same_step_stays_when_the_request_asks_for_speech(known):
    raw = [step("translation", 0, text="Where is the station?"), step("text-to-speech", 1, text="<resource>-0")]
    for request in ("Translate 'Where is the station?' into French and read it aloud.",
                    "Translate 'Where is the station?' into French, then say it.",
                    "Translate 'Where is the station?' into French and give me the audio."):
        plan, _ = validate_plan(raw, known, request)
        assert [t.task for t in plan.tasks] == ["translation", "text-to-speech"], request


def test_a_file_name_is_not_a_wish_for_that_kind_of_output(known):
    raw = [step("automatic-speech-recognition", 0, audio="talk.wav"), step("summarization", 1, text="<resource>-0"),
           step("text-to-speech", 2, text="<resource>-1")]
    plan, _ = validate_plan(raw, known, "Transcribe 'talk.wav' and summarize it.")
    assert [t.task for t in plan.tasks] == ["automatic-speech-recognition", "summarization"]
    assert mentioned_kinds(RequestWords("Transcribe 'talk.wav' and summarize it.")) == set()


def test_only_leaves_go_and_dropping_repeats_up_the_chain(known):
    # the second image is a leaf; once it is gone, the first image, which fed only it, is one too
    raw = [step("summarization", 0, text="A long text about bees."), step("text-to-image", 1, text="<resource>-0"),
           step("image-to-image", 2, image="<resource>-1"), step("text-to-speech", 3, text="<resource>-0"),
           step("question-answering", 4, question="Why?", context="<resource>-0")]
    plan, repairs = validate_plan(raw, known, "Summarize 'A long text about bees.' and answer: why?")
    assert [t.task for t in plan.tasks] == ["summarization", "question-answering"]
    assert [r["task_id"] for r in repairs if r["reason"].startswith("dropped")] == [3, 2, 1]
    # a media step whose output another step uses stays
    raw = [step("text-to-speech", 0, text="hello"), step("automatic-speech-recognition", 1, audio="<resource>-0")]
    plan, _ = validate_plan(raw, known, "Check how well 'hello' survives a round trip.")
    assert [t.task for t in plan.tasks] == ["text-to-speech", "automatic-speech-recognition"]


def test_a_single_step_plan_and_text_leaves_are_never_dropped(known):
    plan, repairs = validate_plan([step("text-to-image", 0, text="a fox")], known, "Make something of 'a fox'.")
    assert [t.task for t in plan.tasks] == ["text-to-image"] and repairs == []
    raw = [step("image-to-text", 0, image="a.png"), step("translation", 1, text="<resource>-0")]
    plan, _ = validate_plan(raw, known, "Caption a.png in French.")
    assert len(plan.tasks) == 2


def test_no_request_no_judgement(known):
    raw = [step("translation", 0, text="x"), step("text-to-speech", 1, text="<resource>-0")]
    assert len(validate_plan(raw, known)[0].tasks) == 2


# text-generation that the request never asks for: taken out, its readers read what it read


def test_a_description_step_between_two_tasks_is_taken_out_and_its_reader_reads_its_input(known):
    raw = [step("object-detection", 0, image="street.jpg"), step("text-generation", 1, text="<resource>-0"),
           step("conversational", 2, text="<resource>-1")]
    plan, repairs = validate_plan(raw, known, "Find the objects in street.jpg and chat with me about them.")
    assert [(t.task, t.dep) for t in plan.tasks] == [("object-detection", []), ("conversational", [0])]
    assert plan.tasks[1].args["text"] == "<resource>-0"
    assert any(r["task_id"] == 1 and "the tasks that read it read task 0" in r["reason"] for r in repairs)


def test_an_unread_writing_step_next_to_the_asked_task_is_dropped(known):
    raw = [step("text-generation", 0, text="Who is the father of computers?"),
           step("question-answering", 1, question="Who is the father of computers?",
                context="Charles Babbage is known as the father of computers.")]
    plan, _ = validate_plan(raw, known, "Who is the father of computers? Answer from this text: "
                                        "'Charles Babbage is known as the father of computers.'")
    assert [t.task for t in plan.tasks] == ["question-answering"]


@pytest.mark.parametrize("request_text", [
    "Classify the emotion in 'a.wav', then write a short poem about it.",
    "Detect the objects in a.jpg and generate a description of them.",
    "Identify the objects in a.jpg and paraphrase the result.",
    "Generate the rest of this incomplete sentence after reading a.jpg: 'Once upon'",
])
def test_writing_stays_when_the_request_asks_for_a_text(known, request_text):
    raw = [step("image-classification", 0, image="a.jpg"), step("text-generation", 1, text="<resource>-0")]
    plan, _ = validate_plan(raw, known, request_text)
    # the first step may become object-detection ("Detect the objects"); the writing step stays
    assert [t.task for t in plan.tasks][1:] == ["text-generation"] and plan.tasks[1].args == {"text": "<resource>-0"}


def test_writing_with_its_own_text_that_others_read_stays_and_a_lone_step_stays(known):
    # taking it out would lose the text its reader uses
    raw = [step("text-generation", 0, text="The Eiffel Tower is in Paris."),
           step("translation", 1, text="<resource>-0", tgt_lang="fr")]
    plan, _ = validate_plan(raw, known, "Tell me in French where the Eiffel Tower is.")
    assert [t.task for t in plan.tasks] == ["text-generation", "translation"]
    plan, _ = validate_plan([step("text-generation", 0, text="hi")], known, "Hello there")
    assert [t.task for t in plan.tasks] == ["text-generation"]


# image-classification for a request that never asks what an image shows

def test_a_classifier_whose_label_an_edit_takes_as_image_is_taken_out(known):
    raw = [step("image-classification", 0, image="a.jpg"),
           step("image-text-to-image", 1, image="<resource>-0", prompt="make the car blue")]
    plan, repairs = validate_plan(raw, known, "Make the car in the image a.jpg blue.")
    assert plan.as_list() == [{"task": "image-text-to-image", "id": 1, "dep": [],
                               "args": {"image": "a.jpg", "prompt": "make the car blue"}}]
    assert any("never asks what an image shows" in r["reason"] for r in repairs)


@pytest.mark.parametrize("request_text", [
    "Classify a.jpg and then make the car in the image blue.",
    "Identify what is in a.jpg, then make the car in the image blue.",
])
def test_the_classifier_stays_when_the_request_asks_what_the_image_shows(known, request_text):
    raw = [step("image-classification", 0, image="a.jpg"),
           step("image-text-to-image", 1, image="<resource>-0", prompt="make the car blue")]
    plan, _ = validate_plan(raw, known, request_text)
    assert [t.task for t in plan.tasks] == ["image-classification", "image-text-to-image"]


def test_a_classifier_whose_label_is_read_as_text_stays(known):
    raw = [step("image-classification", 0, image="a.jpg"), step("translation", 1, text="<resource>-0", tgt_lang="fr")]
    plan, _ = validate_plan(raw, known, "Tell me in French about the picture a.jpg.")
    assert [t.task for t in plan.tasks] == ["image-classification", "translation"]


def test_an_unread_classifier_goes_unless_asked_and_whether_an_image_contains_something_asks_for_a_class(known):
    raw = [step("image-classification", 0, image="a.jpg"), step("translation", 1, text="Wo ist das?", tgt_lang="en")]
    plan, repairs = validate_plan(raw, known, "Translate 'Wo ist das?' and look at the picture a.jpg.")
    assert [t.task for t in plan.tasks] == ["translation"] and "no task uses its label" in repairs[0]["reason"]
    plan, _ = validate_plan(raw, known, "Translate 'Wo ist das?' and tell me what is in the picture a.jpg.")
    assert [t.task for t in plan.tasks] == ["image-classification", "translation"]  # asked: a parallel step, kept
    plan, _ = validate_plan(raw[:1], known, "Look at the picture a.jpg.")
    assert [t.task for t in plan.tasks] == ["image-classification"]  # never empties a plan
    raw = [step("image-classification", 0, image="a.jpg"),
           step("image-text-to-image", 1, image="<resource>-0", prompt="add a flag")]
    plan, _ = validate_plan(raw, known, "Find out whether a.jpg contains a landmark, then add a flag to the image.")
    assert [t.task for t in plan.tasks] == ["image-classification", "image-text-to-image"]


FIRST_RUN = ("Summarize this paragraph in one sentence, then tell me how similar the summary is to the sentence "
             "'The council approved new bike lanes.': The city council met on Tuesday to discuss the new bicycle "
             "lanes.")


def test_a_repeated_analysis_is_taken_out_and_not_relinked_into_a_chain(known):
    """The README's first run, as the 1.5B planned it on an AVX-512 machine: the similarity twice, on the
    same arguments. Without this repair the chain re-linking made the repeat compare task 1's output."""
    similar = {"source_sentence": "<resource>-0", "sentences": ["The council approved new bike lanes."]}
    raw = [step("summarization", 0, text="The city council met on Tuesday to discuss the new bicycle lanes."),
           step("sentence-similarity", 1, **similar), step("sentence-similarity", 2, **similar)]
    plan, repairs = validate_plan(raw, known, FIRST_RUN)
    assert [(t.task, t.id) for t in plan.tasks] == [("summarization", 0), ("sentence-similarity", 1)]
    assert plan.by_id[1].args == similar
    assert repairs == [{"task_id": 2, "reason": "taken out: repeats task 1 (sentence-similarity) on the same arguments"}]


def test_readers_of_a_repeat_read_the_first_and_only_exact_repeats_of_analyses_go(known):
    raw = [step("object-detection", 0, image="street.jpg"), step("object-detection", 1, image="street.jpg"),
           step("text-to-speech", 2, text="<resource>-1"), step("object-detection", 3, image="park.jpg")]
    plan, repairs = validate_plan(raw, known, "Detect the objects in street.jpg and park.jpg and read the first list aloud.")
    assert [t.id for t in plan.tasks] == [0, 2, 3]
    assert plan.by_id[2].args["text"] == "<resource>-0" and plan.by_id[2].dep == [0]
    assert repairs == [{"task_id": 1, "reason": "taken out: repeats task 0 (object-detection) on the same "
                                                "arguments; the tasks that read it read task 0"}]
    # two pictures from one prompt are two different pictures: a maker's repeat stays
    raw = [step("text-to-image", 0, text="a red fox in the snow"), step("text-to-image", 1, text="a red fox in the snow")]
    plan, repairs = validate_plan(raw, known, "Draw two pictures of a red fox in the snow.")
    assert [t.id for t in plan.tasks] == [0, 1] and repairs == []
