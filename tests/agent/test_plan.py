"""Plan validation and repair: what reaches execution, and a recorded reason for every change."""

import pytest

from hugginggpt.agent.plan import Plan, canonical_refs
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.errors import PlanError
from hugginggpt.tools.table import ArgSpec, TaskSpec


def arg(name, kind, required=False, **fields):
    return ArgSpec(name=name, kind=kind, required=required, description="", **fields)


def tool(name, description, *args):
    """A task outside the table: its outputs unknown."""
    return TaskSpec(name=name, description=description, args=list(args), in_table=False)


TASKS = {
    "image-to-text": tool("image-to-text", "Caption an image.", arg("image", "image", True)),
    "text-to-speech": tool("text-to-speech", "Speak a text.", arg("text", "text", True)),
    "image-segmentation": tool(
        "image-segmentation", "Segment.", arg("image", "image", True),
        arg("subtask", "choice", choices=["semantic", "instance"]),
    ),
    "sentence-similarity": tool(
        "sentence-similarity", "Compare.", arg("source_sentence", "text", True), arg("sentences", "list", True),
    ),
}


def reasons(repairs):
    return " | ".join(r["reason"] for r in repairs)


def test_valid_chain_passes_unchanged():
    raw = [
        {"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "a.png"}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
    ]
    plan, repairs = validate_plan(raw, TASKS)
    assert repairs == []
    assert plan.as_list() == [
        {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": "a.png"}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
    ]
    assert [(d, t.id) for t in plan.tasks for d in t.dep] == [(0, 1)]


def test_the_planners_step_words_stay_on_the_task_and_in_the_list_only_where_written():
    """``step`` labels a task for people (progress, the page, the trace); validation keeps it as written,
    white space folded, and drops what is not text; a task the planner wrote none for has no ``step``."""
    raw = [
        {"step": "  describe\n the picture ", "task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
        {"step": 7, "task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}},
        {"task": "image-segmentation", "id": 2, "args": {"image": "a.png"}},
    ]
    plan, repairs = validate_plan(raw, TASKS)
    assert repairs == []
    assert [t.step for t in plan.tasks] == ["describe the picture", None, None]
    assert plan.as_list()[0] == {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": "a.png"},
                                 "step": "describe the picture"}
    assert [sorted(node) for node in plan.as_list()[1:]] == [["args", "dep", "id", "task"]] * 2


@pytest.mark.parametrize("spelling", ["<resource-0>", "<resource>0", "<node-0>", "<Resource_0>", "<resource> - 0"])
def test_reference_variants_become_canonical(spelling):
    plan, _ = validate_plan(
        [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
         {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": spelling}}], TASKS)
    assert plan.by_id[1].args["text"] == "<resource>-0"
    assert canonical_refs(["x <node-3> y"]) == ["x <resource>-3 y"]


def test_dep_rebuilt_from_references_with_reason():
    plan, repairs = validate_plan(
        [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
         {"task": "image-to-text", "id": 1, "args": {"image": "b.png"}},
         {"task": "sentence-similarity", "id": 2, "dep": [0],
          "args": {"source_sentence": "<resource>-0", "sentences": ["<resource>-1", "fixed"]}}], TASKS)
    assert plan.by_id[2].dep == [0, 1]
    assert repairs == [{"task_id": 2, "reason": "dep [0] rebuilt as [0, 1] from the <resource>-N references in its arguments",
                        "pass": "dep"}]


def test_dep_comes_from_the_references_when_the_planner_writes_none():
    """The planner's format has no "dep": building it from the references is no repair to report."""
    plan, repairs = validate_plan(
        [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
         {"task": "sentence-similarity", "id": 1, "args": {"source_sentence": "<resource>-0", "sentences": ["x"]}}],
        TASKS)
    assert plan.by_id[1].dep == [0] and plan.by_id[0].dep == [] and repairs == []


def test_unknown_task_close_match_and_reject_with_dependants():
    plan, repairs = validate_plan(
        [{"task": "image_to_text", "id": 0, "args": {"image": "a.png"}},
         {"task": "make-coffee", "id": 1, "args": {}},
         {"task": "text-to-speech", "id": 2, "args": {"text": "<resource>-1"}},
         {"task": "text-to-speech", "id": 3, "args": {"text": "<resource>-0"}}], TASKS)
    assert [t.id for t in plan.tasks] == [0, 3]
    assert plan.by_id[0].task == "image-to-text"
    text = reasons(repairs)
    assert "'image_to_text' replaced by the closest known task 'image-to-text'" in text
    assert "rejected: unknown task 'make-coffee'" in text
    assert "task 2 (text-to-speech) depends on rejected task(s) [1]" in text


def test_duplicate_ids_renumbered_and_later_references_follow():
    plan, repairs = validate_plan(
        [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
         {"task": "image-to-text", "id": 0, "args": {"image": "b.png"}},
         {"task": "text-to-speech", "id": 2, "args": {"text": "<resource>-0"}}], TASKS)
    assert [t.id for t in plan.tasks] == [0, 3, 2]  # a fresh id, never one the plan already uses
    assert plan.by_id[3].args == {"image": "b.png"}
    assert plan.by_id[2].dep == [3]  # the nearest earlier task written as id 0
    assert "duplicate id 0: task 'image-to-text' renumbered to 3" in reasons(repairs)


def test_missing_reference_self_reference_and_cycle_rejected():
    plan, repairs = validate_plan(
        [{"task": "text-to-speech", "id": 0, "args": {"text": "<resource>-9"}},
         {"task": "text-to-speech", "id": 1, "args": {"text": "<resource>-1"}},
         {"task": "image-to-text", "id": 2, "args": {"image": "<resource>-3"}},
         {"task": "image-to-text", "id": 3, "args": {"image": "<resource>-2"}},
         {"task": "image-to-text", "id": 4, "args": {"image": "ok.png"}}], TASKS)
    assert [t.id for t in plan.tasks] == [4]
    text = reasons(repairs)
    assert "uses the output of task(s) [9], which do not exist" in text
    assert "task 1 (text-to-speech) refers to its own output" in text
    assert "tasks [2, 3] depend on each other in a cycle" in text


def test_arguments_fit_the_schema():
    plan, repairs = validate_plan(
        [{"task": "image-to-text", "id": 0, "args": {"images": "a.png", "colour": "red"}},
         {"task": "image-segmentation", "id": 1, "args": {"image": "a.png", "subtask": "funky"}},
         {"task": "text-to-speech", "id": 2, "args": {"voice": "x"}}], TASKS)
    assert plan.by_id[0].args == {"image": "a.png"}
    assert plan.by_id[1].args == {"image": "a.png"}
    assert 2 not in plan.by_id
    text = reasons(repairs)
    assert "argument 'images' renamed to 'image'" in text
    assert "argument 'colour' dropped" in text
    assert "'subtask'='funky' dropped: not one of ['semantic', 'instance']" in text
    assert "task 2 (text-to-speech) is missing required argument(s) ['text']" in text


def test_a_text_without_the_mark_its_task_needs_is_rejected_and_named():
    from hugginggpt.agent.plan.check import problems
    from hugginggpt.agent.plan.context import PlanContext
    from hugginggpt.agent.plan.parse import read_plan
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    # the model's "fill-mask" for "write a safety note" or "embed these complaints": nothing to fill
    raw = [{"task": "fill-mask", "id": 0, "args": {"text": "Escribe una nota de seguridad"}},
           {"task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}]
    request = "Escribe una nota de seguridad y léela en voz alta"
    assert problems(read_plan(raw)[0], PlanContext.of(known, request)) == [
        "task 0: text 'Escribe una nota de seguridad' holds none of ['[MASK]', '<mask>']"]
    plan, repairs = validate_plan(raw, known, request)
    assert plan.tasks == []
    assert "task 0 (fill-mask) works on a text with [MASK] or <mask> in it, and 'Escribe una nota de seguridad' " \
           "has none" in reasons(repairs)
    # a mask token in any case, or an earlier task's text for a request that writes one, can run as written
    for text, request in (("Paris is the [mask] of France.", "fill in: Paris is the [mask] of France."),
                          ("東京は日本の<mask>です。", "fill in: 東京は日本の<mask>です。"),
                          ("<resource>-0", "Traduis « Paris est la [MASK] de la France » en anglais, puis complète-la")):
        steps = [{"task": "translation", "id": 0, "args": {"text": "x", "tgt_lang": "fr"}},
                 {"task": "fill-mask", "id": 1, "args": {"text": text}}]
        assert validate_plan(steps, known, request)[1] == []
    # a request that writes no mask token: no text of its plan holds one, a written text included
    steps = [{"task": "text-generation", "id": 0, "args": {"text": "a sentence about Paris"}},
             {"task": "fill-mask", "id": 1, "args": {"text": "<resource>-0"}}]
    plan, repairs = validate_plan(steps, known, "Schreib einen Satz über Paris und ergänze ihn")
    assert [t.task for t in plan.tasks] == ["text-generation"] and "rejected" in reasons(repairs)
    # a label or an answer holds no mask token, and a sentence of the model's own around a reference needs one
    # in its own words: "what's the total on a.png and on b.png?" with a fill-mask "combining" the two answers
    for source, text in ((
            {"task": "text-classification", "id": 0, "args": {"text": "Das Essen war kalt."}}, "<resource>-0"), (
            {"task": "document-question-answering", "id": 0, "args": {"image": "a.png", "question": "Total?"}},
            "The total on a.png is <resource>-0. What is the combined total?")):
        steps = [source, {"task": "fill-mask", "id": 1, "args": {"text": text}}]
        plan, repairs = validate_plan(steps, known, "a.png: the total? Das Essen war kalt.")
        assert [t.task for t in plan.tasks] == [source["task"]]
        assert problems(read_plan(steps)[0], PlanContext.of(known, "a.png: the total? Das Essen war kalt.")) == [
            f"task 1: text {text[:60]!r} holds none of ['[MASK]', '<mask>']"]


@pytest.mark.parametrize("message, raw", [
    ("Danke dir, das reicht für heute.", {"task": "text-classification", "id": 0, "args": {"text": "danke dir das reicht für heute"}}),
    ("你好，你是谁？", {"task": "token-classification", "id": 0, "args": {"text": "你好，你是谁"}}),
    ("can you work with videos too?", {"task": "question-answering", "id": 0,
                                       "args": {"question": "Can you work with videos too?", "context": "videos"}}),
])
def test_an_analysis_of_the_users_whole_message_is_taken_out(message, raw):
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    plan, repairs = validate_plan([raw, {"task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}], known, message)
    assert plan.tasks == []
    assert [r["pass"] for r in repairs] == ["own-message", "own-message"]
    assert "would analyse the user's whole message" in repairs[0]["reason"]
    assert not any(r["reason"].startswith("rejected") for r in repairs)  # no re-ask: the answer is direct


def test_a_whole_message_made_into_something_or_one_with_a_file_or_a_quoted_text_stays():
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    kept = [
        ("写一首关于春天的五言绝句", {"task": "text-generation", "id": 0, "args": {"text": "写一首关于春天的五言绝句"}}),
        ("Is this review positive: 'loved it'", {"task": "text-classification", "id": 0, "args": {"text": "loved it"}}),
        ("classify note.wav please", {"task": "audio-classification", "id": 0, "args": {"audio": "note.wav"}}),
    ]
    for message, raw in kept:
        assert validate_plan([raw], known, message)[1] == [], message
    # the whole message of a request that gives a file, or of a conversation, is left to the planner
    raw = {"task": "text-classification", "id": 0, "args": {"text": "what is in a.jpg"}}
    assert validate_plan([raw], known, "what is in a.jpg")[0].tasks != []
    raw = {"task": "text-classification", "id": 0, "args": {"text": "and this one?"}}
    assert validate_plan([raw], known, "Describe cats.\nand this one?")[0].tasks != []


@pytest.mark.parametrize("request_text, first, rest", [
    ("denoise both takes (take1.wav, take2.wav) and transcribe them", "take1.wav", ["take2.wav"]),
    ("Entferne bei beiden Aufnahmen take1.wav und take2.wav das Rauschen, dann transkribieren", "take1.wav",
     ["take2.wav"]),
    ("把 a.wav、b.wav和c.wav 去噪后转成文字", "a.wav", ["b.wav", "c.wav"]),
    ("a.wavとb.wavのノイズを消して文字起こしして", "a.wav", ["b.wav"]),
])
def test_a_chain_written_for_one_file_of_a_list_is_repeated_for_each_other(request_text, first, rest):
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    raw = [{"task": "audio-to-audio", "id": 0, "args": {"audio": first}},
           {"task": "automatic-speech-recognition", "id": 1, "args": {"audio": "<resource>-0"}}]
    plan, repairs = validate_plan(raw, known, request_text)
    chains = [(t.task, t.args["audio"]) for t in plan.tasks]
    expected = [("audio-to-audio", first), ("automatic-speech-recognition", "<resource>-0")]
    for i, file in enumerate(rest):
        expected += [("audio-to-audio", file), ("automatic-speech-recognition", f"<resource>-{2 + 2 * i}")]
    assert chains == expected
    assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["listed-files"] * len(rest)
    assert not any(r["reason"].startswith("rejected") for r in repairs)


@pytest.mark.parametrize("request_text", [
    "caption both of these and translate the captions into German: beach1.jpg, beach2.jpg",
    "beach1.jpg と beach2.jpg にそれぞれキャプションを付けて、ドイツ語に翻訳して",
    "ponle un pie de foto a beach1.jpg y beach2.jpg y traduce los pies de foto al alemán",
])
def test_a_chain_continued_from_one_of_alike_steps_on_a_list_is_repeated_for_the_others(request_text):
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    raw = [{"task": "image-to-text", "id": 0, "args": {"image": "beach1.jpg"}},
           {"task": "image-to-text", "id": 1, "args": {"image": "beach2.jpg"}},
           {"task": "translation", "id": 2, "args": {"text": "<resource>-0", "tgt_lang": "de"}}]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [(t.task, t.args.get("image") or t.args["text"]) for t in plan.tasks] == [
        ("image-to-text", "beach1.jpg"), ("image-to-text", "beach2.jpg"),
        ("translation", "<resource>-0"), ("translation", "<resource>-1")]
    assert plan.tasks[3].args["tgt_lang"] == "de"
    assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["listed-files"]
    # each continued, or a chain reading both (a comparison of the two captions), stays
    each = [*raw, {"task": "translation", "id": 3, "args": {"text": "<resource>-1", "tgt_lang": "de"}}]
    assert validate_plan(each, known, request_text)[1] == []
    compared = [*raw[:2], {"task": "sentence-similarity", "id": 2,
                           "args": {"source_sentence": "<resource>-0", "sentences": ["<resource>-1"]}}]
    assert validate_plan(compared, known, request_text)[1] == []


def test_files_in_different_roles_or_all_read_are_left_as_planned():
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    # two pictures with a clause between them are not a list: each has its own role
    pose = [{"task": "openpose-control", "id": 0, "args": {"image": "ref_pose.jpg"}},
            {"task": "openpose-text-to-image", "id": 1, "args": {"image": "<resource>-0", "text": "a knight"}}]
    request = "same pose as the girl in ref_pose.jpg, but the content should be whatever is shown in scene.jpg"
    assert [r["pass"] for r in validate_plan(pose, known, request)[1]] == []
    # a list whose files are all read, or whose one reader's chain also reads another task, stays
    both = [{"task": "image-classification", "id": 0, "args": {"image": "a.jpg"}},
            {"task": "image-to-text", "id": 1, "args": {"image": "b.jpg"}}]
    assert validate_plan(both, known, "a.jpg, b.jpg: what are they?")[1] == []
    merged = [{"task": "text-generation", "id": 0, "args": {"text": "a rhyme"}},
              {"task": "image-to-text", "id": 1, "args": {"image": "a.jpg"}},
              {"task": "summarization", "id": 2, "args": {"text": "<resource>-0 <resource>-1"}}]
    plan, repairs = validate_plan(merged, known, "a.jpg, b.jpg: write a rhyme, caption and sum up")
    assert [t.id for t in plan.tasks] == [0, 1, 2] and not [r for r in repairs if r["pass"] == "listed-files"]


def test_a_given_file_named_inside_a_text_is_read_by_the_task_for_that_kind_of_file():
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    request = "make embeddings of these product shots\n\nFiles provided by the user:\n- shots/p1.png\n- shots/p2.png"
    raw = [{"task": "feature-extraction", "id": 0, "args": {"text": "generate embeddings of shots/p1.png"}},
           {"task": "feature-extraction", "id": 1, "args": {"text": "embeddings de shots/p2.png"}}]
    plan, repairs = validate_plan(raw, known, request, words="make embeddings of these product shots")
    assert [(t.task, t.args) for t in plan.tasks] == [("image-feature-extraction", {"image": "shots/p1.png"}),
                                                      ("image-feature-extraction", {"image": "shots/p2.png"})]
    assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["files-in-text"] * 2
    # with no counterpart for that kind of file, a text the task works on reads the file's caption or transcript
    for request, text, reader, file in [("a.jpg: sum it up", "sum up what a.jpg shows", "image-to-text", "a.jpg"),
                                        ("dibuja la escena que describe example.wav",
                                         "la escena descrita en example.wav", "automatic-speech-recognition",
                                         "example.wav")]:
        task = "summarization" if reader == "image-to-text" else "text-to-image"
        plan, repairs = validate_plan([{"task": task, "id": 0, "args": {"text": text}}], known, request)
        kind = "image" if reader == "image-to-text" else "audio"
        assert [(t.task, t.args) for t in plan.tasks] == [(reader, {kind: file}), (task, {"text": "<resource>-0"})]
        assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["files-in-text"]
    # a file some task reads already, two files in one text, a file the request does not give, a question about
    # another input (a caption is no question), a video (no task turns it into a text): as planned
    kept = [
        ("a.jpg: caption it, is the caption positive?",
         [{"task": "image-to-text", "id": 0, "args": {"image": "a.jpg"}},
          {"task": "text-classification", "id": 1, "args": {"text": "is the caption of a.jpg positive?"}}]),
        ("a.jpg and b.jpg: embed them", [{"task": "feature-extraction", "id": 0, "args": {"text": "a.jpg and b.jpg"}}]),
        ("a.jpg: embed it", [{"task": "feature-extraction", "id": 0, "args": {"text": "a photo like c.jpg"}}]),
        ("is the dog from b.jpg also in a.jpg?",
         [{"task": "visual-question-answering", "id": 0, "args": {"image": "a.jpg",
                                                                 "question": "is the dog of b.jpg here?"}}]),
        ("notice: 'Open 9-5'. q.wav: answer it", [{"task": "question-answering", "id": 0, "args": {
            "question": "the question asked in q.wav", "context": "Open 9-5"}}]),
        ("clip.mp4: read it aloud", [{"task": "text-to-speech", "id": 0, "args": {"text": "what clip.mp4 says"}}]),
    ]
    for request, raw in kept:
        plan, repairs = validate_plan(raw, known, request)
        assert [t.task for t in plan.tasks] == [t["task"] for t in raw], raw
        assert not [r for r in repairs if r["pass"] == "files-in-text"]


def test_a_text_written_about_a_given_picture_or_video_is_written_by_the_task_that_sees_it():
    """text-generation told to "look at chart.png and explain the trend" cannot see the chart: the task that
    writes a text about a picture (or a video) reads it, the instruction kept. A text that is only the file
    name gets the file's caption to write from, as before: an instruction-following task needs one."""
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    for request, file, sibling in [("Look at charts/q3.png and explain the trend, then read it aloud",
                                    "charts/q3.png", "image-text-to-text"),
                                   ("ramen.jpg の料理について説明文を書いて", "ramen.jpg", "image-text-to-text"),
                                   ("clip.mp4: write an instagram caption for it", "clip.mp4", "video-text-to-text")]:
        text = f"Write about {file}, briefly."
        raw = [{"task": "text-generation", "id": 0, "args": {"text": text, "max_new_tokens": 100}}]
        plan, repairs = validate_plan(raw, known, request)
        kind = "video" if sibling.startswith("video") else "image"
        assert [(t.task, t.args) for t in plan.tasks] == [(sibling, {kind: file, "text": text, "max_new_tokens": 100})]
        assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["files-in-text"]
    plan, repairs = validate_plan([{"task": "text-generation", "id": 0, "args": {"text": "ramen.jpg"}}], known,
                                  "ramen.jpg: write a menu text")
    assert [t.task for t in plan.tasks] == ["image-to-text", "text-generation"]


@pytest.mark.parametrize("request_text, text", [
    ("same pose as the girl in ref_pose.jpg, but the content should be whatever is shown in scene.jpg",
     "a picture with the same content as scene.jpg"),
    ("mesma pose da menina em ref_pose.jpg, mas o conteúdo tem que ser o que aparece em scene.jpg",
     "uma imagem nova com o conteúdo de scene.jpg"),
    ("ref_pose.jpgの女の子と同じポーズで、内容はscene.jpgに写っているものにして", "scene.jpgの内容の新しい画像"),
])
def test_a_drawing_whose_text_names_an_unread_given_picture_draws_what_that_picture_shows(request_text, text):
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    raw = [{"task": "openpose-control", "id": 0, "args": {"image": "ref_pose.jpg"}},
           {"task": "openpose-text-to-image", "id": 1, "args": {"image": "<resource>-0", "text": text}}]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [(t.task, t.id, t.args) for t in plan.tasks] == [
        ("openpose-control", 0, {"image": "ref_pose.jpg"}),
        ("image-to-text", 1, {"image": "scene.jpg"}),
        ("openpose-text-to-image", 2, {"image": "<resource>-0", "text": "<resource>-1"})]
    assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["files-in-text"]
    assert "'scene.jpg'" in repairs[0]["reason"] and "image-to-text" in repairs[0]["reason"]
    # the picture drawn on named in the text (no other file), a second picture read already, a quoted
    # prompt the user wrote, or a drawing whose text names two unread pictures: as planned
    kept = [
        ("same pose as ref_pose.jpg, a knight", "a knight in the pose of ref_pose.jpg", []),
        ("pose of ref_pose.jpg, content of scene.jpg", "the content of scene.jpg",
         [{"task": "image-to-text", "id": 2, "args": {"image": "scene.jpg"}}]),
        ('in the pose of ref_pose.jpg draw "a knight like scene.jpg"', "a knight like scene.jpg", []),
        ("pose of ref_pose.jpg, content of a.jpg and b.jpg", "the content of a.jpg and b.jpg", []),
    ]
    for request, drawn, more in kept:
        raw = [{"task": "openpose-control", "id": 0, "args": {"image": "ref_pose.jpg"}},
               {"task": "openpose-text-to-image", "id": 1, "args": {"image": "<resource>-0", "text": drawn}}, *more]
        plan, repairs = validate_plan(raw, known, request)
        assert [(t.task, t.args) for t in plan.tasks] == [(t["task"], t["args"]) for t in raw], request
        assert not [r for r in repairs if r["pass"] == "files-in-text"], request


def test_accepted_shapes_and_empty_plan():
    plan, _ = validate_plan({"tasks": [{"task": "image-to-text", "id": "1", "dep": "-1", "args": {"image": "a"}}]}, TASKS)
    assert plan.tasks[0].id == 1
    assert validate_plan([], TASKS) == (Plan(), [])
    plan, repairs = validate_plan(["nonsense", {"task": "image-to-text", "args": {"image": "a"}}], TASKS)
    assert [t.id for t in plan.tasks] == [0] and "dropped entry 0" in reasons(repairs)
    with pytest.raises(PlanError, match="JSON array"):
        validate_plan(42, TASKS)


def test_key_aliases_and_name_value_arguments():
    plan, repairs = validate_plan(
        [{"tool": "image-to-text", "id": 0, "arguments": [{"name": "image", "value": "a.png"}]},
         {"name": "text-to-speech", "id": 1, "parameters": {"text": "<resource>-0"}}], TASKS)
    assert plan.as_list() == [
        {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": "a.png"}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
    ]
    assert repairs == []  # no "dep" written: it is built from the references, nothing to report


@pytest.mark.parametrize("where", ["map", "drawing"])
def test_a_drawing_whose_step_names_an_unread_given_picture_draws_what_that_picture_shows(where):
    """JARVIS's "based on pose of d.jpg and content of e.jpg, please show me a new image": the drawing's text is "a
    new image" and e.jpg is read by no task, but the model's own words for the drawing, or for the map it reads,
    name it: the drawing draws what e.jpg shows. Only file names are read from the step words."""
    from hugginggpt.tools.table import task_table

    known = dict(task_table())
    request = "based on pose of /examples/d.jpg and content of /examples/e.jpg, please show me a new image"
    words = "a new image from the pose of /examples/d.jpg and the content of /examples/e.jpg"
    raw = [{"step": words if where == "map" else "take the pose", "task": "openpose-control", "id": 0,
            "args": {"image": "/examples/d.jpg"}},
           {"step": words if where == "drawing" else "draw it", "task": "openpose-text-to-image", "id": 1,
            "args": {"image": "<resource>-0", "text": "a new image"}}]
    plan, repairs = validate_plan(raw, known, request)
    assert [(t.task, t.args) for t in plan.tasks] == [
        ("openpose-control", {"image": "/examples/d.jpg"}), ("image-to-text", {"image": "/examples/e.jpg"}),
        ("openpose-text-to-image", {"image": "<resource>-0", "text": "<resource>-1"})]
    assert [r["pass"] for r in repairs if r["pass"] != "dep"] == ["files-in-text"]
    assert "its step names '/examples/e.jpg'" in repairs[0]["reason"]
    # step words naming two unread pictures, a picture some task reads, or no given picture; a text that reads a
    # task's result already: as planned
    for request, step, text, more in [
        ("pose of d.jpg, content of a.jpg and b.jpg", "the content of a.jpg and b.jpg", "a new image", []),
        ("pose of d.jpg, content of a.jpg", "the content of a.jpg", "a new image",
         [{"task": "image-classification", "id": 2, "args": {"image": "a.jpg"}}]),
        ("pose of d.jpg, content of a.jpg", "the content of a.jpg", "<resource>-2",
         [{"task": "image-to-text", "id": 2, "args": {"image": "a.jpg"}}]),
        ("pose of d.jpg, a knight", "the content of x.jpg", "a knight", []),
    ]:
        raw = [*more, {"task": "openpose-control", "id": 0, "args": {"image": "d.jpg"}},
               {"step": step, "task": "openpose-text-to-image", "id": 1, "args": {"image": "<resource>-0", "text": text}}]
        plan, repairs = validate_plan(raw, known, request)
        assert not [r for r in repairs if r["pass"] == "files-in-text"], request
