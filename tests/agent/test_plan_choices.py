"""Task names the controller chose narrowly are asked about alone, in both orders of the candidates."""

import json
import re

import pytest
from langchain_core.messages import AIMessage

from hugginggpt.agent.plan.choices import (MAX_GAP, NarrowChoice, alike_steps, check_choices, narrow_choices, picked,
                                          swappable)
from hugginggpt.tools import task_table

from .conftest import ScriptedChatModel, plan_with

KNOWN = task_table()
REQUEST = "please dub for me: 'Iron Man is a superhero.'"
ANSWER = {"wants": ["audio"], "tasks": [
    {"step": "dub the text", "task": "text-to-audio", "id": 0, "args": {"text": "Iron Man is a superhero."}}]}
TEXT = json.dumps(ANSWER)


def call_at(name_part: str, other: str, gap: float = 0.3, text: str = TEXT) -> dict:
    """A close call where ``name_part`` starts in ``text``'s first task name (or anywhere, for a step's words)."""
    return {"at": text.index(name_part), "drawn": name_part, "other": other, "gap": gap}


def test_a_narrow_choice_is_a_task_name_whose_runner_up_leads_to_one_or_two_other_names():
    assert narrow_choices(TEXT, [call_at("-audio", "-speech")], ANSWER, KNOWN) == [
        NarrowChoice(0, "text-to-audio", ("text-to-speech",))]
    # a choice made by more than the margin, one in the step's words, one that does not name the other task
    assert narrow_choices(TEXT, [call_at("-audio", "-speech", gap=MAX_GAP + 0.1)], ANSWER, KNOWN) == []
    assert narrow_choices(TEXT, [call_at("dub the", "write")], ANSWER, KNOWN) == []
    # the runner-up at the name's first letters leads to a family of names, not to a choice between two
    start = TEXT.index("text-to-audio")
    family = {"at": start, "drawn": "text", "other": "text", "gap": 0.1}
    assert len([n for n in KNOWN if n.startswith("text")]) > 2
    assert narrow_choices(TEXT, [family], ANSWER, KNOWN) == []
    # a closing quote as the runner-up: the name the model would have ended there
    answer = {"tasks": [{"step": "s", "task": "image-to-video", "id": 0, "args": {"image": "a.png"}}]}
    text = json.dumps(answer)
    end = {"at": text.index("-video"), "drawn": "-video", "other": '-image"', "gap": 1.0}
    assert narrow_choices(text, [end], answer, KNOWN) == [NarrowChoice(0, "image-to-video", ("image-to-image",))]


def test_the_names_written_must_be_the_parsed_answer_s_one_for_one():
    other = {"tasks": [{**ANSWER["tasks"][0], "task": "text-to-speech"}]}
    assert narrow_choices(TEXT, [call_at("-audio", "-speech")], other, KNOWN) == []
    assert narrow_choices(TEXT, [call_at("-audio", "-speech")], {"tasks": []}, KNOWN) == []


def test_another_task_is_a_candidate_only_when_it_runs_on_the_step_s_arguments():
    text = {"text": "hello"}
    assert swappable(text, KNOWN["text-to-audio"], KNOWN["text-to-speech"])
    assert swappable({"text": "hi", "candidate_labels": ["a", "b"]}, KNOWN["zero-shot-classification"],
                     KNOWN["text-classification"])
    assert not swappable(text, KNOWN["text-generation"], KNOWN["image-text-to-text"])  # no image to read
    assert not swappable({"image": "a.png"}, KNOWN["image-to-text"], KNOWN["text-to-speech"])
    assert not swappable("text", KNOWN["text-to-audio"], KNOWN["text-to-speech"])


def favouring(name: str | None, log: list | None = None):
    """A scorer that prefers the letter of ``name`` (None: always the first letter, a position bias)."""

    def scores(messages, letters):
        human = messages[-1][1]
        if log is not None:
            log.append(human)
        lines = dict(re.findall(r"^([A-C])\) ([\w-]+):", human, flags=re.M))
        return [1.0 if (name is None and letter == "A") or lines.get(letter) == name else 0.0 for letter in letters]

    return scores


def test_the_model_s_pick_counts_only_when_both_orders_agree():
    options = ["text-to-audio", "text-to-speech"]
    asked: list[str] = []
    assert picked(favouring("text-to-speech", asked), REQUEST, "dub it", options, KNOWN) == "text-to-speech"
    assert "A) text-to-audio:" in asked[0] and "A) text-to-speech:" in asked[1]
    assert "please dub for me" in asked[0] and "One step of it: dub it" in asked[0]
    assert picked(favouring(None), REQUEST, "dub it", options, KNOWN) == "text-to-audio"  # a position, not a task
    assert picked(favouring("text-to-audio"), REQUEST, "dub it", options, KNOWN) == "text-to-audio"


async def test_a_renamed_task_keeps_only_the_arguments_its_new_task_takes():
    answer = {"tasks": [{"step": "is it about sport?", "task": "zero-shot-classification", "id": 0,
                         "args": {"text": "Goal!", "candidate_labels": ["sport", "news"]}}]}
    text = json.dumps(answer)
    call = {"at": text.index("zero-shot"), "drawn": "zero", "other": "text-class", "gap": 0.2}
    data, repairs, asked = await check_choices(favouring("text-classification"), "Goal! sport?", text, answer, [call],
                                               KNOWN)
    assert data["tasks"][0]["task"] == "text-classification" and data["tasks"][0]["args"] == {"text": "Goal!"}
    assert asked == {0: ("zero-shot-classification", "text-classification")}
    assert repairs[0]["pass"] == "choice" and repairs[0]["task_id"] == 0
    assert answer["tasks"][0]["task"] == "zero-shot-classification"  # the answer itself is left as it was


LISTED = "count the sheep in these: e1.jpg, e2.png, e3.jpg"


def counted(*files: str, top_k: int = 1) -> dict:
    return {"tasks": [{"step": f"count the sheep in {f}", "task": "image-classification", "id": i,
                       "args": {"image": f, "top_k": top_k}} for i, f in enumerate(files)]}


def test_alike_steps_do_the_same_on_other_files_of_one_list():
    lists = [("e1.jpg", "e2.png", "e3.jpg")]
    assert alike_steps(counted("e1.jpg", "e2.png", "e3.jpg")["tasks"], 0, lists) == [1, 2]
    assert alike_steps(counted("e1.jpg", "e2.png", "./e3.jpg")["tasks"], 2, lists) == [0, 1]
    assert alike_steps(counted("e1.jpg", "e2.png", "e3.jpg")["tasks"], 0, []) == []  # no list written
    assert alike_steps(counted("e1.jpg", "x.jpg")["tasks"], 0, lists) == []  # a file outside the list
    other = counted("e1.jpg", "e2.png")["tasks"]
    other[1]["args"]["top_k"] = 3  # another setting: not the same step
    assert alike_steps(other, 0, lists) == []
    other = counted("e1.jpg", "e2.png")["tasks"]
    other[1]["task"] = "object-detection"
    assert alike_steps(other, 0, lists) == []


async def test_a_choice_asked_about_once_holds_for_the_same_step_on_the_other_listed_files():
    """The model writes the first of several alike steps with a narrow choice and copies the name; asked about
    the first alone, its pick renames the copies too (with only the arguments the new task takes)."""
    answer = counted("e1.jpg", "e2.png", "e3.jpg")
    text = json.dumps(answer)
    call = {"at": text.index("image-classification"), "drawn": "image-", "other": "object-", "gap": 0.4}
    asked_log: list[str] = []
    data, repairs, asked = await check_choices(favouring("object-detection", asked_log), LISTED, text, answer, [call],
                                               KNOWN, [("e1.jpg", "e2.png", "e3.jpg")])
    assert [t["task"] for t in data["tasks"]] == ["object-detection"] * 3
    assert [t["args"] for t in data["tasks"]] == [{"image": "e1.jpg"}, {"image": "e2.png"}, {"image": "e3.jpg"}]
    assert asked == {0: ("image-classification", "object-detection")}
    assert len(asked_log) == 2 and [r["task_id"] for r in repairs] == [0, 1, 2]
    assert "on another file of the same list" in repairs[1]["reason"]
    # without the list (files the words do not write one after another) only the step asked about changes
    data, repairs, _ = await check_choices(favouring("object-detection"), LISTED, text, answer, [call], KNOWN)
    assert [t["task"] for t in data["tasks"]] == ["object-detection", "image-classification", "image-classification"]
    # a pick of the name written renames nothing
    data, repairs, _ = await check_choices(favouring("image-classification"), LISTED, text, answer, [call], KNOWN,
                                           [("e1.jpg", "e2.png", "e3.jpg")])
    assert data is answer and not repairs


class _Scoring(ScriptedChatModel):
    """A scripted controller that lists close calls with its answers and scores replies as ``favour`` says."""

    favour: str | None = None
    scored: int = 0

    def answer_scores(self, messages, answers):
        self.scored += 1
        return favouring(self.favour)(messages, answers)


@pytest.mark.parametrize("setting", ["on", "off"])
async def test_the_planner_asks_about_a_narrow_choice_unless_told_not_to(monkeypatch, setting):
    monkeypatch.setenv("HUGGINGGPT_CHOICE_CHECK", setting)
    message = AIMessage(TEXT, response_metadata={"close_calls": [call_at("-audio", "-speech")]})
    llm = _Scoring(responses=[message], favour="text-to-speech")
    result = await plan_with(llm, KNOWN, REQUEST)
    if setting == "off":
        assert [t.task for t in result.plan.tasks] == ["text-to-audio"] and llm.scored == 0
        assert "choice_checks" not in result.usage
        return
    assert [t.task for t in result.plan.tasks] == ["text-to-speech"]
    assert llm.scored == 2 and result.usage["choice_checks"] == 1 and result.usage["llm_calls"] == 1
    assert any(r["pass"] == "choice" and "text-to-speech" in r["reason"] for r in result.repairs)
    assert result.raw_outputs == [TEXT]  # what the model wrote is kept as it wrote it


async def test_an_answer_without_close_calls_or_a_controller_without_scores_is_not_asked_about():
    plain = json.dumps({"tasks": [{"step": "sum it up", "task": "summarization", "id": 0, "args": {"text": "Goal!"}}]})
    llm = _Scoring(responses=[AIMessage(plain)], favour="text-classification")
    result = await plan_with(llm, KNOWN, "Goal! sum it up")
    assert [t.task for t in result.plan.tasks] == ["summarization"] and llm.scored == 0  # no twin or sibling either
    message = AIMessage(TEXT, response_metadata={"close_calls": [call_at("-audio", "-speech")]})
    result = await plan_with(ScriptedChatModel(responses=[message]), KNOWN, REQUEST)
    assert [t.task for t in result.plan.tasks] == ["text-to-audio"]


def test_twins_are_the_pairs_of_tasks_alike_in_what_they_read_and_make():
    from hugginggpt.agent.plan.choices import twins

    pairs = twins(KNOWN)
    assert pairs["text-to-audio"] == "text-to-speech" and pairs["text-to-speech"] == "text-to-audio"
    assert pairs["voice-activity-detection"] == "audio-classification"
    assert "text-to-image" not in pairs and "object-detection" not in pairs  # alone, or one of three
    assert twins({name: KNOWN[name] for name in ("text-to-speech", "text-to-image")}) == {}
    # two of the table's three alike image analysers offered (as TaskBench's domain does) are no twins
    assert twins({name: KNOWN[name] for name in ("object-detection", "image-segmentation")}) == {}


def test_twins_are_asked_about_with_what_sets_them_apart():
    """The question between two twins shows each one's ``contrast`` (what the description of a task list entry does
    not say: no words are spoken in a generated sound); any other question shows the descriptions."""
    from hugginggpt.agent.plan.choices import choice_messages, twins

    pairs = twins(KNOWN)
    siblings = {name for spec in KNOWN.values() if spec.siblings for name in (spec.name, *spec.siblings)}
    for name, spec in KNOWN.items():  # a contrast belongs to a twin pair, both halves, to siblings, or to a drawing
        drawing = bool(spec.map_by)  # along a map: what it keeps (drawing_choice.py)
        assert bool(spec.contrast) == (name in siblings or drawing
                                       or (name in pairs and bool(KNOWN[pairs[name]].contrast))), name
    question = choice_messages("dub it", "dub the video", ["text-to-audio", "text-to-speech"], KNOWN)[1][1]
    assert f"A) text-to-audio: {KNOWN['text-to-audio'].contrast}" in question
    assert f"B) text-to-speech: {KNOWN['text-to-speech'].contrast}" in question
    assert KNOWN["text-to-speech"].description not in question
    other = choice_messages("is she talking?", "find speech", ["audio-classification", "voice-activity-detection"],
                            KNOWN)[1][1]
    assert f"A) audio-classification: {KNOWN['audio-classification'].description}" in other
    mixed = choice_messages("say it", "say it", ["text-to-speech", "translation"], KNOWN)[1][1]
    assert KNOWN["text-to-speech"].description in mixed and KNOWN["text-to-speech"].contrast not in mixed


async def test_a_task_with_a_twin_is_asked_about_without_a_narrow_choice():
    """The model wrote "dub it" as text-to-audio with no close call: asked alone in both orders, it picks speech."""
    answer = {"tasks": [{"step": "dub the video", "task": "text-to-audio", "id": 0, "args": {"text": "a boy runs"}}]}
    llm = _Scoring(responses=[AIMessage(json.dumps(answer))], favour="text-to-speech")
    result = await plan_with(llm, KNOWN, "dub 'a boy runs' for me")
    assert [t.task for t in result.plan.tasks] == ["text-to-speech"]
    assert result.usage["twin_checks"] == 1 and "choice_checks" not in result.usage and llm.scored == 2
    assert "text-to-audio and text-to-speech take the same inputs" in result.repairs[0]["reason"]
    kept = _Scoring(responses=[AIMessage(json.dumps(answer))], favour="text-to-audio")
    result = await plan_with(kept, KNOWN, "dub 'a boy runs' for me")
    assert [t.task for t in result.plan.tasks] == ["text-to-audio"] and result.usage["twin_checks"] == 1


def test_siblings_are_asked_about_with_their_contrast_and_only_with_each_other():
    from hugginggpt.agent.plan.choices import choice_messages, partners

    pairs = partners(KNOWN)
    assert pairs["object-detection"] == ["visual-question-answering"] == pairs["keypoint-detection"]
    assert "visual-question-answering" not in pairs and pairs["text-to-speech"] == ["text-to-audio"]
    assert pairs["text-classification"] == ["text2text-generation"]
    assert pairs["text2text-generation"] == ["question-answering"] and "question-answering" not in pairs
    assert pairs["text-ranking"] == ["summarization"] and "summarization" not in pairs
    assert pairs["image-segmentation"] == ["image-to-image"]
    assert pairs["zero-shot-classification"] == ["text-classification"]
    assert pairs["image-classification"] == ["object-detection"] and pairs["image-text-to-image"] == ["image-to-image"]
    assert pairs["text-generation"] == ["image-to-text"] and "image-to-text" not in pairs
    assert pairs["text-to-image"] == ["image-text-to-image"]
    assert "object-detection" not in partners({n: KNOWN[n] for n in ("object-detection", "image-classification")})
    asked = choice_messages("how old?", "tell me her age", ["object-detection", "visual-question-answering"], KNOWN)
    assert KNOWN["visual-question-answering"].contrast in asked[1][1] and KNOWN["object-detection"].contrast in asked[1][1]
    other = choice_messages("x", "find the joints", ["object-detection", "keypoint-detection"], KNOWN)[1][1]
    assert KNOWN["keypoint-detection"].description in other and KNOWN["object-detection"].description in other


async def test_a_step_written_as_a_detection_is_asked_about_against_visual_question_answering():
    """A sibling reads more (a question): picked, it reads the step's own words, in the request's language; a step
    without words is not asked; picked against, nothing changes."""
    from hugginggpt.agent.plan.choices import check_twins

    step = "推测这个人的年龄和心情"
    answer = {"tasks": [{"step": "画一张随机的人脸", "task": "text-to-image", "id": 0, "args": {"text": "a face"}},
                        {"step": step, "task": "object-detection", "id": 1, "args": {"image": "<resource>-0"}}]}
    data, repairs, asked = await check_twins(favouring("visual-question-answering"), "...", answer, KNOWN)
    assert data["tasks"][1] == {"step": step, "task": "visual-question-answering", "id": 1,
                                "args": {"image": "<resource>-0", "question": step}}
    assert asked == 1 and "question: the step's own words" in repairs[0]["reason"] and repairs[0]["task_id"] == 1
    data, repairs, asked = await check_twins(favouring("object-detection"), "...", answer, KNOWN)
    assert data is answer and not repairs and asked == 1
    wordless = {"tasks": [{**answer["tasks"][1], "step": ""}]}
    data, repairs, asked = await check_twins(favouring("visual-question-answering"), "...", wordless, KNOWN)
    assert data is wordless and asked == 0


async def test_a_rewrite_written_as_a_classification_is_asked_about_against_text2text_generation():
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [{"step": "reformuler la phrase de manière plus formelle", "task": "text-classification",
                         "id": 0, "args": {"text": "salut, je peux pas demain", "top_k": 1}}]}
    data, repairs, asked = await check_twins(favouring("text2text-generation"), "...", answer, KNOWN)
    assert data["tasks"][0]["task"] == "text2text-generation" and data["tasks"][0]["args"] == {
        "text": "salut, je peux pas demain"}
    assert asked == 1 and "are siblings" in repairs[0]["reason"] and "step's own words" not in repairs[0]["reason"]


@pytest.mark.parametrize("written, sibling, args, renamed_args", [
    # a sentiment written with the labels the user lists: the labels go, the text stays
    ("zero-shot-classification", "text-classification",
     {"text": "<resource>-0", "candidate_labels": ["positive", "negative"]}, {"text": "<resource>-0"}),
    # a count written as a classification
    ("image-classification", "object-detection", {"image": "/examples/a.jpg", "top_k": 1}, {"image": "/examples/a.jpg"}),
    # an upscale or a colorizing written as an edit keeps its prompt
    ("image-text-to-image", "image-to-image", {"image": "oldscan.jpg", "prompt": "colorize"},
     {"image": "oldscan.jpg", "prompt": "colorize"}),
])
async def test_a_step_is_asked_about_against_its_sibling_and_keeps_the_arguments_the_sibling_takes(
        written, sibling, args, renamed_args):
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [{"step": "the step's own words", "task": written, "id": 0, "args": args}]}
    data, repairs, asked = await check_twins(favouring(sibling), "...", answer, KNOWN)
    assert data["tasks"][0]["task"] == sibling and data["tasks"][0]["args"] == renamed_args
    assert asked == 1 and "are siblings" in repairs[0]["reason"]
    data, repairs, asked = await check_twins(favouring(written), "...", answer, KNOWN)
    assert data is answer and not repairs and asked == 1


@pytest.mark.parametrize("written, sibling, args, renamed_args, said", [
    # "要点をまとめて" written as a ranking of the one transcript: the summary reads the transcript
    ("text-ranking", "summarization", {"query": "会議の要点", "texts": ["<resource>-0"]}, {"text": "<resource>-0"},
     "text: what it read as texts"),
    # "根据这段话回答：长城有多长？'...'" written as a rewrite of the passage: the passage is the context, the step
    # the question
    ("text2text-generation", "question-answering", {"text": "长城是中国古代的军事防御工程。"},
     {"context": "长城是中国古代的军事防御工程。", "question": "the step's own words"}, "context: what it read as text"),
])
async def test_a_sibling_reads_the_values_the_task_table_carries_over(written, sibling, args, renamed_args, said):
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [
        {"step": "transcribe it", "task": "automatic-speech-recognition", "id": 0, "args": {"audio": "a.mp3"}},
        {"step": "the step's own words", "task": written, "id": 1, "args": args}]}
    data, repairs, asked = await check_twins(favouring(sibling), "...", answer, KNOWN)
    assert data["tasks"][1]["task"] == sibling and data["tasks"][1]["args"] == renamed_args
    assert asked == 1 and said in repairs[0]["reason"]


async def test_a_ranking_of_several_texts_is_not_asked_about_against_a_summary():
    """A list of several texts cannot be one text to summarize: the step is a ranking as written."""
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [{"step": "rank them", "task": "text-ranking", "id": 0,
                         "args": {"query": "fresh basil", "texts": ["Keep it in water.", "Basil is from Asia."]}}]}
    data, repairs, asked = await check_twins(favouring("summarization"), "...", answer, KNOWN)
    assert data is answer and not repairs and asked == 0


def test_the_task_table_rejects_sibling_args_for_no_sibling_or_no_argument(tmp_path):
    from hugginggpt.errors import TaskTableError
    from hugginggpt.tools.table import load_table

    def table(sibling_args: str) -> str:
        path = tmp_path / "tasks.yaml"
        path.write_text(f"""tasks:
  a:
    category: nlp
    description: A.
    args: [{{name: text, kind: text, required: true, description: T.}}]
    outputs: [text]
    contrast: A.
    siblings: [b]
    sibling_args: {sibling_args}
  b:
    category: nlp
    description: B.
    args: [{{name: passage, kind: text, required: true, description: P.}}]
    outputs: [text]
    contrast: B.
""")
        return str(path)

    assert load_table(table("{b: {passage: text}}"))[0]["a"].sibling_args == {"b": {"passage": "text"}}
    with pytest.raises(TaskTableError, match="none of its siblings"):
        load_table(table("{a: {text: text}}"))
    with pytest.raises(TaskTableError, match="passage: texts"):
        load_table(table("{b: {passage: texts}}"))


@pytest.mark.parametrize("made, step", [
    ("text-to-image", "write a caption for the picture"),
    ("image-text-to-image", "schreib eine Bildunterschrift dazu"),
    ("unconditional-image-generation", "给这张图配一句描述"),
])
async def test_a_text_written_after_one_made_picture_is_asked_about_against_its_caption(made, step):
    """Text generation reads no picture; its sibling image-to-text reads the one picture made before the step
    (in any language: the step's words are not read, only the plan's structure)."""
    from hugginggpt.agent.plan.choices import check_twins

    spec = KNOWN[made]
    first = {"step": "make the picture", "task": made, "id": 0,
             "args": {arg.name: ("photo.jpg" if arg.value_kind == "image" else "a lake") for arg in spec.required_args}}
    answer = {"tasks": [first, {"step": step, "task": "text-generation", "id": 1, "args": {"text": "a lake"}},
                        {"step": "read it aloud", "task": "text-to-speech", "id": 2, "args": {"text": "<resource>-1"}}]}
    asked: list[str] = []
    data, repairs, _ = await check_twins(favouring("image-to-text", asked), "...", answer, KNOWN)
    assert data["tasks"][1] == {"step": step, "task": "image-to-text", "id": 1, "args": {"image": "<resource>-0"}}
    assert data["tasks"][2] == answer["tasks"][2] and sum("image-to-text:" in q for q in asked) == 2  # both orders
    assert "image: <resource>-0, the one made before it" in repairs[0]["reason"] and repairs[0]["task_id"] == 1
    data, repairs, _ = await check_twins(favouring("text-generation"), "...", answer, KNOWN)
    assert data is answer and not repairs


@pytest.mark.parametrize("tasks", [
    # no picture before the step (a tagline, then its poster)
    [{"step": "write a tagline", "task": "text-generation", "id": 0, "args": {"text": "Bean There"}},
     {"step": "make a poster", "task": "text-to-image", "id": 1, "args": {"text": "<resource>-0"}}],
    # two pictures made before it: which one is not for the plumbing to guess
    [{"step": "a", "task": "text-to-image", "id": 0, "args": {"text": "a koi pond"}},
     {"step": "b", "task": "image-text-to-image", "id": 1, "args": {"image": "<resource>-0", "prompt": "at night"}},
     {"step": "describe", "task": "text-generation", "id": 2, "args": {"text": "a koi pond"}}],
    # a step that reads an earlier result continues that result, not a picture
    [{"step": "a", "task": "text-to-image", "id": 0, "args": {"text": "a red panda"}},
     {"step": "b", "task": "image-to-text", "id": 1, "args": {"image": "<resource>-0"}},
     {"step": "write a story from it", "task": "text-generation", "id": 2, "args": {"text": "<resource>-1"}}],
    # a detection's boxed picture is not its result (its labels are), nor a picture to caption
    [{"step": "a", "task": "object-detection", "id": 0, "args": {"image": "example.jpg"}},
     {"step": "summarize the objects", "task": "text-generation", "id": 1, "args": {"text": "the objects"}}],
    # a picture the user gives is not one the plan made
    [{"step": "a", "task": "visual-question-answering", "id": 0, "args": {"image": "leaf.jpg", "question": "ill?"}},
     {"step": "write a care tip", "task": "text-generation", "id": 1, "args": {"text": "care tip for a leaf"}}],
])
async def test_a_text_is_not_asked_about_against_a_caption_without_one_picture_to_read(tasks):
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": tasks}
    asked: list[str] = []
    data, repairs, _ = await check_twins(favouring("image-to-text", asked), "...", answer, KNOWN)
    assert data is answer and not repairs and not any("image-to-text:" in q for q in asked)


async def test_a_drawing_after_one_made_picture_is_asked_about_against_an_edit_of_it():
    """"Draw a watercolour fox, then make the fox wear a scarf" written as two drawings: picked, the second edits
    the first picture, its instruction the step's own words; the first drawing (nothing before it) is not asked."""
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [{"step": "画一只水彩狐狸", "task": "text-to-image", "id": 0, "args": {"text": "a watercolor fox"}},
                        {"step": "改成狐狸戴着围巾", "task": "text-to-image", "id": 1,
                         "args": {"text": "a watercolor fox wearing a scarf", "negative_prompt": "blurry"}}]}
    data, repairs, asked = await check_twins(favouring("image-text-to-image"), "...", answer, KNOWN)
    assert data["tasks"][0] == answer["tasks"][0] and asked == 1
    assert data["tasks"][1] == {"step": "改成狐狸戴着围巾", "task": "image-text-to-image", "id": 1,
                                "args": {"image": "<resource>-0", "prompt": "改成狐狸戴着围巾"}}
    assert "image: <resource>-0, the one made before it; prompt: the step's own words" in repairs[0]["reason"]


async def test_a_depth_map_is_no_picture_to_caption():
    """A koi pond drawn, its depth map, then "a caption": the caption reads the drawing (the map is an analysis)."""
    from hugginggpt.agent.plan.choices import check_twins

    answer = {"tasks": [{"step": "a", "task": "text-to-image", "id": 0, "args": {"text": "a koi pond"}},
                        {"step": "b", "task": "depth-estimation", "id": 1, "args": {"image": "<resource>-0"}},
                        {"step": "配一句描述", "task": "text-generation", "id": 2, "args": {"text": "a koi pond"}}]}
    data, repairs, _ = await check_twins(favouring("image-to-text"), "...", answer, KNOWN)
    assert data["tasks"][2]["task"] == "image-to-text" and data["tasks"][2]["args"] == {"image": "<resource>-0"}
