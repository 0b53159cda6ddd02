"""question-answering on a context nobody gave becomes visual-question-answering on the request's image."""

from __future__ import annotations

import pytest

from hugginggpt.agent.plan import task_info_from_spec
from hugginggpt.agent.plan_repair import validate_plan
from hugginggpt.tools import task_table


@pytest.fixture(scope="module")
def known():
    table = task_table()
    return {name: task_info_from_spec(table[name]) for name in table}


def qa(n, context, question="What colour is the car?"):
    return {"task": "question-answering", "id": n, "args": {"question": question, "context": context}}


@pytest.mark.parametrize("context", ["Bees pollinate most flowering plants and produce honey.", "example.jpg"])
def test_an_invented_context_or_the_image_itself_means_a_question_about_the_image(known, context):
    plan, repairs = validate_plan([qa(0, context)], known, "In 'example.jpg', what colour is the car?")
    assert plan.as_list() == [{"task": "visual-question-answering", "id": 0, "dep": [],
                               "args": {"image": "example.jpg", "question": "What colour is the car?"}}]
    assert "visual-question-answering" in repairs[0]["reason"]


def test_the_image_comes_from_the_nearest_earlier_image_task(known):
    raw = [{"task": "text-to-image", "id": 0, "args": {"text": "a red car"}}, qa(1, "A car is shown.")]
    plan, _ = validate_plan(raw, known, "Draw a red car, then tell me what colour the car is.")
    assert plan.as_list()[1] == {"task": "visual-question-answering", "id": 1, "dep": [0],
                                 "args": {"image": "<resource>-0", "question": "What colour is the car?"}}


@pytest.mark.parametrize("context,request_text", [
    ("The car is blue.", "Given 'The car is blue.' and the photo a.jpg, what colour is the car?"),  # given text
    ("the car is blue", "Here is my note: 'The car is blue and fast.' What colour is the car? See a.jpg"),  # loose copy
    ("<resource>-0", "Caption a.jpg, then answer: what colour is the car?"),  # an earlier output
    ("A car is shown.", "What colour is the car?"),  # no image to ask about
    ("A car is shown.", "Compare a.jpg and b.jpg: what colour is the car?"),  # which image?
])
def test_a_real_context_or_no_single_image_leaves_it_alone(known, context, request_text):
    raw = [{"task": "image-to-text", "id": 0, "args": {"image": "a.jpg"}}, qa(1, context)]
    if "<resource>" not in context:
        raw = [qa(0, context)]
    plan, _ = validate_plan(raw, known, request_text)
    assert plan.as_list()[-1]["task"] == "question-answering"


def test_nothing_changes_when_visual_question_answering_is_not_offered(known):
    offered = {k: v for k, v in known.items() if k != "visual-question-answering"}
    plan, _ = validate_plan([qa(0, "made up")], offered, "In 'example.jpg', what colour is the car?")
    assert plan.as_list()[0]["task"] == "question-answering"


# document/visual QA on an image nobody has, while the request quotes the passage -> question-answering

PASSAGE = "The first programmer is often considered to be Ada Lovelace, who wrote an algorithm for the Analytical Engine."


@pytest.mark.parametrize("task", ["document-question-answering", "visual-question-answering"])
def test_a_question_about_a_quoted_passage_is_answered_from_it(known, task):
    raw = [{"task": task, "id": 0, "args": {"image": "document.jpg", "question": "Who was the first programmer?"}}]
    request = f"Here is the document text: '{PASSAGE}' Who was the first programmer?"
    plan, repairs = validate_plan(raw, known, request)
    assert plan.as_list() == [{"task": "question-answering", "id": 0, "dep": [],
                               "args": {"question": "Who was the first programmer?", "context": PASSAGE}}]
    assert "an image the request does not have" in repairs[-1]["reason"]


@pytest.mark.parametrize("request_text", [
    f"In scan.jpg, who was the first programmer? It is like '{PASSAGE}'",  # the request has an image
    "Who was the first programmer? 'Ada' or 'Charles'?",  # nothing long enough to be a passage
])
def test_document_qa_stays_with_an_image_or_without_a_passage(known, request_text):
    raw = [{"task": "document-question-answering", "id": 0, "args": {"image": "scan.jpg", "question": "Who?"}}]
    plan, _ = validate_plan(raw, known, request_text)
    assert plan.as_list()[0]["task"] == "document-question-answering"


def test_a_quoted_question_is_not_taken_for_the_passage(known):
    question = "Which of the many engineers named in the report designed the tower in Paris?"
    raw = [{"task": "document-question-answering", "id": 0, "args": {"image": "doc.png", "question": question}}]
    plan, _ = validate_plan(raw, known, f"My question about the document is '{question}'")
    assert plan.as_list()[0]["task"] == "document-question-answering"


# text-generation meant as a media maker

def test_writing_read_as_audio_was_meant_as_speech(known):
    raw = [{"task": "object-detection", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "text-generation", "id": 1, "args": {"text": "<resource>-0"}},
           {"task": "audio-to-audio", "id": 2, "args": {"audio": "<resource>-1"}}]
    plan, repairs = validate_plan(raw, known, "Detect the objects in a.jpg, make a speech of them and clean it up.")
    assert [t.task for t in plan.tasks] == ["object-detection", "text-to-speech", "audio-to-audio"]
    assert [t.dep for t in plan.tasks] == [[], [0], [1]]
    assert any("takes as audio: text-to-speech" in r["reason"] for r in repairs)


def test_writing_for_a_request_that_asks_for_a_picture_was_meant_as_text_to_image(known):
    raw = [{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "a.wav"}},
           {"task": "text-generation", "id": 1, "args": {"text": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, "Transcribe a.wav and generate a relevant image based on the text.")
    assert [t.task for t in plan.tasks] == ["automatic-speech-recognition", "text-to-image"]
    # not when the request also asks for writing, or a text-to-image is planned already, or it edits "the image"
    for request in ("Transcribe a.wav, write a poem about it and generate an image of the poem.",
                    "Transcribe a.wav and make the image brighter."):
        plan, _ = validate_plan(raw, known, request)
        assert "text-to-image" not in [t.task for t in plan.tasks], request


def test_writing_on_a_question_about_a_quoted_passage_is_question_answering(known):
    request = f"Who was the first programmer, according to this text: '{PASSAGE}'"
    raw = [{"task": "text-generation", "id": 0, "args": {"text": request}}]
    plan, repairs = validate_plan(raw, known, request)
    assert plan.as_list() == [{"task": "question-answering", "id": 0, "dep": [], "args": {
        "question": "Who was the first programmer, according to this text", "context": PASSAGE}}]
    assert "text-generation on a question" in repairs[-1]["reason"]
    # a request that asks for writing keeps its text-generation
    request = f"Write a poem about who Ada Lovelace was, from this text: '{PASSAGE}'"
    plan, _ = validate_plan([{"task": "text-generation", "id": 0, "args": {"text": request}}], known, request)
    assert plan.as_list()[0]["task"] == "text-generation"


def test_writing_on_a_quoted_question_takes_the_other_quoted_text_as_context(known):
    question = "What did Ada Lovelace write an algorithm for?"
    request = f"I need the answer to this question: '{question}' Here is the document text: '{PASSAGE}'"
    plan, _ = validate_plan([{"task": "text-generation", "id": 0, "args": {"text": question}}], known, request)
    assert plan.as_list()[0]["args"] == {"question": question, "context": PASSAGE}


# image-to-image with an edit instruction -> image-text-to-image; not a restyling

@pytest.mark.parametrize("prompt,expected", [
    ("Change the background to blue", "image-text-to-image"),
    ("add a red hat to the dog", "image-text-to-image"),
    ("enhance the image to match the target style", "image-to-image"),
    ("turn it into a Van Gogh style painting", "image-to-image"),
    ("<resource>-0", "image-to-image"),
])
def test_an_edit_instruction_is_image_editing_and_a_restyling_is_not(known, prompt, expected):
    raw = [{"task": "image-to-image", "id": 1, "args": {"image": "a.jpg", "prompt": prompt}}]
    if "<resource>" in prompt:
        raw.insert(0, {"task": "image-to-text", "id": 0, "args": {"image": "a.jpg"}})
    plan, _ = validate_plan(raw, known, "Do what I said to the image a.jpg.")
    assert plan.as_list()[-1]["task"] == expected
    assert plan.as_list()[-1]["args"]["prompt"] == prompt


# speech recognition meant as audio-classification

@pytest.mark.parametrize("request_text,expected", [
    ("Clean up 'cmd.wav' and classify the spoken command.", "audio-classification"),
    ("Tell me the emotion of the speaker in 'cmd.wav'.", "audio-classification"),
    ("Transcribe 'cmd.wav' and classify the command it gives.", "automatic-speech-recognition"),
    ("What does the speaker say in 'cmd.wav'?", "automatic-speech-recognition"),
    ("Summarize 'cmd.wav'.", "automatic-speech-recognition"),
])
def test_a_request_for_a_recordings_class_and_not_its_words_is_audio_classification(known, request_text, expected):
    raw = [{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "cmd.wav"}},
           {"task": "summarization", "id": 1, "args": {"text": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, request_text)
    assert plan.as_list()[0]["task"] == expected


# object detection meant as image-classification

@pytest.mark.parametrize("request_text,expected", [
    ("Segment a.jpg, then classify what is in it.", "image-classification"),
    ("What is the category of the object in a.jpg?", "image-classification"),
    ("Detect the objects in a.jpg and classify them.", "object-detection"),  # detection asked for too
    ("Identify the objects in a.jpg.", "object-detection"),  # no class asked for
])
def test_a_request_for_a_class_and_no_objects_found_is_image_classification(known, request_text, expected):
    raw = [{"task": "image-segmentation", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "object-detection", "id": 1, "args": {"image": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, request_text)
    assert plan.as_list()[1]["task"] == expected


def test_another_classification_task_accounts_for_the_word(known):
    raw = [{"task": "object-detection", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "token-classification", "id": 1, "args": {"text": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, "Look at a.jpg, then run token classification on the result.")
    assert [t.task for t in plan.tasks] == ["object-detection", "token-classification"]


# question-answering on a classifier's label -> visual (document) question-answering

@pytest.mark.parametrize("request_text,expected", [
    ("In a.jpg, what colour is the car?", "visual-question-answering"),
    ("My scanned document a.jpg: what is the total amount?", "document-question-answering"),
])
def test_answering_from_a_classifiers_label_is_a_question_about_the_image(known, request_text, expected):
    raw = [{"task": "image-classification", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "question-answering", "id": 1, "args": {"question": "What is it?", "context": "<resource>-0"}}]
    plan, repairs = validate_plan(raw, known, request_text)
    assert plan.as_list() == [{"task": expected, "id": 1, "dep": [], "args": {"image": "a.jpg", "question": "What is it?"}}]
    assert "task 0 taken out" in repairs[-1]["reason"]


def test_a_label_rewritten_by_an_unrequested_writing_step_is_still_a_question_about_the_image(known):
    raw = [{"task": "image-classification", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "text-generation", "id": 1, "args": {"text": "<resource>-0"}},
           {"task": "question-answering", "id": 2, "args": {"question": "What is the penalty?", "context": "<resource>-1"}}]
    plan, repairs = validate_plan(raw, known, "My legal document a.jpg: 'What is the penalty?'")
    assert plan.as_list() == [{"task": "document-question-answering", "id": 2, "dep": [],
                               "args": {"image": "a.jpg", "question": "What is the penalty?"}}]
    assert [r["task_id"] for r in repairs] == [1, 2]


def test_a_label_that_another_task_reads_too_keeps_its_classifier(known):
    raw = [{"task": "image-classification", "id": 0, "args": {"image": "a.jpg"}},
           {"task": "question-answering", "id": 1, "args": {"question": "What is it?", "context": "<resource>-0"}},
           {"task": "translation", "id": 2, "args": {"text": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, "Classify a.jpg, translate the label and tell me what it is.")
    assert [t.task for t in plan.tasks] == ["image-classification", "question-answering", "translation"]


# question-answering on a picture a task made -> visual (document) question-answering on it

@pytest.mark.parametrize("maker,args", [
    ("text-to-image", {"text": "The sun sets in the west."}),
    ("image-text-to-image", {"image": "a.jpg", "prompt": "Make the car blue"}),
])
def test_answering_from_a_made_picture_is_a_question_about_that_picture(known, maker, args):
    raw = [{"task": maker, "id": 0, "args": args}, qa(1, "<resource>-0", "Which colour is the car?")]
    plan, repairs = validate_plan(raw, known, "Make the picture, then answer: 'Which colour is the car?' (see a.jpg)")
    assert plan.as_list()[1] == {"task": "visual-question-answering", "id": 1, "dep": [0],
                                 "args": {"image": "<resource>-0", "question": "Which colour is the car?"}}
    assert any("as its context" in r["reason"] for r in repairs)


def test_answering_from_a_caption_or_a_detection_stays_question_answering(known):
    for maker in ("image-to-text", "object-detection"):  # they make a text the context can be
        raw = [{"task": maker, "id": 0, "args": {"image": "a.jpg"}}, qa(1, "<resource>-0")]
        plan, _ = validate_plan(raw, known, "Describe a.jpg, then answer: what colour is the car?")
        assert [t.task for t in plan.tasks] == [maker, "question-answering"]


# image-classification of a text -> text-to-image of that text

def test_classifying_a_label_as_an_image_was_meant_as_drawing_it(known):
    raw = [{"task": "tabular-classification", "id": 0, "args": {"table": "a.jpg"}},
           {"task": "image-classification", "id": 1, "args": {"image": "<resource>-0"}},
           {"task": "object-detection", "id": 2, "args": {"image": "<resource>-1"}}]
    plan, _ = validate_plan(raw, known, "Classify the table in a.jpg, generate an image from the class and "
                                        "detect the objects in it.")
    assert [(t.task, t.args) for t in plan.tasks] == [
        ("tabular-classification", {"table": "a.jpg"}), ("text-to-image", {"text": "<resource>-0"}),
        ("object-detection", {"image": "<resource>-1"})]


# a plan of one image-classification for a request that asks to know something -> visual QA

@pytest.mark.parametrize("request_text,expected", [
    ("I have an image a.jpg and I would like to know the color of the car in the image.",
     ("visual-question-answering", "I have an image a.jpg and I would like to know the color of the car in the image")),
    ("My scanned document a.jpg: I need to find out the answer to 'What is the total?'",
     ("document-question-answering", "What is the total?")),
    ("I'd like to know which class a.jpg belongs to.", ("image-classification", None)),  # asks for a class
    ("I'd like to know what objects are in a.jpg.", ("object-detection", None)),  # asks for objects
    ("Please look at a.jpg.", ("image-classification", None)),  # asks nothing
])
def test_a_lone_classifier_for_a_question_about_the_image_is_visual_question_answering(known, request_text, expected):
    plan, _ = validate_plan([{"task": "image-classification", "id": 0, "args": {"image": "a.jpg"}}], known, request_text)
    assert (plan.tasks[0].task, plan.tasks[0].args.get("question")) == expected
    assert plan.tasks[0].args["image"] == "a.jpg"


def test_classifying_speech_as_an_image_is_not_taken_for_drawing(known):
    raw = [{"task": "text-to-speech", "id": 0, "args": {"text": "Hello there"}},
           {"task": "image-classification", "id": 1, "args": {"image": "<resource>-0"}}]
    plan, _ = validate_plan(raw, known, "Say 'Hello there' aloud and classify the result.")
    assert [t.task for t in plan.tasks][-1] == "image-classification"  # speech is no text to draw
