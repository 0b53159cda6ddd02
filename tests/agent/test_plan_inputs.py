"""A plan reads only what exists: the request's files (its text, attached files, the conversation so far) or an
earlier task's output. Held three ways: the plan schema made for the request (a grammar-decoding model cannot
write another file), the validity passes (a media or table argument reading nothing rejects its task, naming
the tasks that could make one), and the re-ask. Also: condition maps are drawn along by their drawing task,
and the answer's ``wants`` is delivered."""

from __future__ import annotations

import pytest

from hugginggpt.agent.plan import validate_plan
from hugginggpt.agent.plan.check import problems
from hugginggpt.agent.plan.context import PlanContext, input_kinds, request_inputs
from hugginggpt.agent.plan.outputs import delivered_kinds, stated_wants, undelivered
from hugginggpt.agent.plan.parse import plan_schema, read_plan
from hugginggpt.llm.json_grammar import ITEM_STATES
from hugginggpt.tools import task_table

from .conftest import ScriptedChatModel, follows, plan_with, script

TASKS = dict(task_table())


def step(task, id, **args):
    return {"task": task, "id": id, "args": args}


def first_tasks(schema):
    return {branch["properties"]["task"]["enum"][0] for branch in schema["properties"]["tasks"]["prefixItems"][0]["anyOf"]}


# ----- what a request gives


@pytest.mark.parametrize("request_text, kind, expected", [
    ("make the sky in lake.jpg stormy", "image", ("lake.jpg",)),
    ("把 会议.wav 转成文字", "audio", ("会议.wav",)),
    ("describe https://example.org/pic?id=3 please", "image", ("https://example.org/pic?id=3",)),
    ("which month sold most in sales_2023.csv?", "table", ("sales_2023.csv",)),
    ("draw a cat", "image", ()),
])
def test_request_inputs_are_the_files_and_urls_it_names(request_text, kind, expected):
    assert request_inputs(request_text)[kind] == expected


def test_an_attached_file_whose_name_tells_no_kind_may_fill_any_media_argument():
    inputs = request_inputs("what is this?\n\nFiles provided by the user:\n- /uploads/f81c", ("/uploads/f81c",))
    assert all("/uploads/f81c" in inputs[kind] for kind in ("image", "audio", "video", "table"))


def test_input_kinds_are_read_from_file_names_in_any_language():
    assert input_kinds("¿Qué dice grabacion.mp3 y qué muestra foto.png?") == {"audio", "image"}
    assert input_kinds("画一只在月球上的猫") == frozenset()


# ----- the schema made for the request


def test_a_request_without_files_cannot_start_with_a_task_that_reads_media():
    schema = plan_schema(TASKS, request_inputs("make me a picture of a lighthouse and a short clip of it"))
    first = first_tasks(schema)
    assert {"text-to-image", "text-to-video", "text-generation", "text-to-speech"} <= first
    assert not first & {"image-to-image", "image-text-to-image", "video-classification", "image-to-video",
                        "automatic-speech-recognition"}
    later = schema["properties"]["tasks"]["items"]["anyOf"]
    edit = next(b for b in later if b["properties"]["task"]["enum"] == ["image-text-to-image"])
    assert edit["properties"]["args"]["properties"]["image"] == {"type": "string", "pattern": "^<resource>-[0-9]{1,2}$"}


def test_a_media_argument_holds_one_of_the_request_s_files_or_an_earlier_result():
    schema = plan_schema(TASKS, request_inputs("caption beach.jpg and dog.png"))
    first = schema["properties"]["tasks"]["prefixItems"][0]["anyOf"]
    caption = next(b for b in first if b["properties"]["task"]["enum"] == ["image-to-text"])
    assert caption["properties"]["args"]["properties"]["image"] == {"type": "string", "enum": ["beach.jpg", "dog.png"]}
    later = schema["properties"]["tasks"]["items"]["anyOf"]
    caption = next(b for b in later if b["properties"]["task"]["enum"] == ["image-to-text"])
    assert {"type": "string", "enum": ["beach.jpg", "dog.png"]} in caption["properties"]["args"]["properties"]["image"]["anyOf"]


@pytest.mark.parametrize("request_text", [
    "what was the Q3 revenue according to charts/q3.png?",
    "这张表格截图 scan.jpg 里哪一行最贵？",
    "forecast next week's sales: 120, 135, 150, 160",
])
def test_a_table_task_is_offered_only_for_a_request_that_gives_a_table_file(request_text):
    """A chart or a photo of a sheet is an image (an image task reads it), a list of numbers in the words a text:
    no table task can run on either, so the grammar offers none at any step."""
    schema = plan_schema(TASKS, request_inputs(request_text))
    tables = {"tabular-classification", "tabular-regression", "time-series-forecasting", "table-question-answering"}
    later = {b["properties"]["task"]["enum"][0] for b in schema["properties"]["tasks"]["items"]["anyOf"]}
    assert not (first_tasks(schema) | later) & tables
    assert "document-question-answering" in first_tasks(schema) or "image" not in input_kinds(request_text)
    schema = plan_schema(TASKS, request_inputs("Estimate the price of each house in homes_q2.csv"))
    tabular = next(b for b in schema["properties"]["tasks"]["prefixItems"][0]["anyOf"]
                   if b["properties"]["task"]["enum"] == ["tabular-regression"])
    assert tabular["properties"]["args"]["properties"]["table"] == {"type": "string", "enum": ["homes_q2.csv"]}


@pytest.mark.parametrize("request_text, offered", [
    ("What word goes in the blank? 'The quick brown [MASK] jumps over the lazy dog.'", True),
    ("東京は日本の<MASK>です。空欄を埋めて", True),
    ("combine the totals on receipt_a.png and receipt_b.png", False),
    ("embed these two complaints: 'late delivery' and 'damaged box'", False),
])
def test_fill_mask_is_offered_only_for_a_request_that_writes_a_mask_token(request_text, offered):
    schema = plan_schema(TASKS, request_inputs(request_text))
    later = {b["properties"]["task"]["enum"][0] for b in schema["properties"]["tasks"]["items"]["anyOf"]}
    assert ("fill-mask" in first_tasks(schema)) is offered and ("fill-mask" in later) is offered


def written(task, id, **args):
    """A step as the planner writes it (``step`` first)."""
    return {"step": "do it", **step(task, id, **args)}


def test_no_step_reads_an_image_audio_or_video_that_neither_the_request_nor_an_earlier_task_gives():
    # "generate a video titled ... and dub it": the dubbing cannot be written as a transcription of the video
    schema = plan_schema(TASKS, request_inputs("generate a video with the title 'An astronaut is walking' and dub it"))
    video = written("text-to-video", 0, text="An astronaut is walking")
    assert not follows(schema, [video, written("automatic-speech-recognition", 1, audio="<resource>-0")])
    assert not follows(schema, [video, written("audio-to-audio", 1, audio="<resource>-0")])
    assert follows(schema, [video, written("text-to-speech", 1, text="An astronaut is walking")])
    assert follows(schema, [video, written("text-to-speech", 1, text="<resource>-0")])  # texts are not held
    # once a task makes audio, a later task may read it; an image is still read from nowhere
    speech = written("text-to-speech", 0, text="hello")
    assert follows(schema, [speech, written("automatic-speech-recognition", 1, audio="<resource>-0")])
    assert not follows(schema, [speech, written("image-to-text", 1, image="<resource>-0")])


def test_a_given_file_is_read_at_any_step_and_an_earlier_result_only_of_a_kind_made_so_far():
    schema = plan_schema(TASKS, request_inputs("Écoute pitch.wav : que dit-il, et quand parle-t-il ?"))
    transcript = written("automatic-speech-recognition", 0, audio="pitch.wav")
    assert follows(schema, [transcript, written("voice-activity-detection", 1, audio="pitch.wav")])
    assert not follows(schema, [transcript, written("voice-activity-detection", 1, audio="<resource>-0")])
    cleaned = written("audio-to-audio", 0, audio="pitch.wav")
    assert follows(schema, [cleaned, written("automatic-speech-recognition", 1, audio="<resource>-0"),
                            written("voice-activity-detection", 2, audio="<resource>-0")])
    assert not follows(schema, [written("voice-activity-detection", 0, audio="other.wav")])


async def test_the_schema_follows_the_model():
    """Hosted models get the general schema; a model decoding under a whole-schema grammar gets the request's."""
    tasks = {name: TASKS[name] for name in ("text-to-image", "image-to-text", "image-text-to-image")}

    class GrammarModel(ScriptedChatModel):
        grammar_schemas: bool = True

    hosted = script({"tasks": [step("text-to-image", 0, text="a cat")]}, structured=True)
    await plan_with(hosted, tasks, "draw a cat")
    assert "items" in hosted.schemas[0]["properties"]["tasks"] and "prefixItems" not in hosted.schemas[0]["properties"]["tasks"]
    embedded = GrammarModel(responses=list(script({"tasks": [step("text-to-image", 0, text="a cat")]},
                                                  structured=True).responses), structured=True)
    await plan_with(embedded, tasks, "draw a cat")
    assert first_tasks(embedded.schemas[0]) == {"text-to-image"}
    # the grammar's states: only the embedded model's schema carries them (a hosted provider would refuse them)
    assert ITEM_STATES in embedded.schemas[0]["properties"]["tasks"]
    assert ITEM_STATES not in hosted.schemas[0]["properties"]["tasks"]


# ----- validity: an input that exists nowhere


def test_an_invented_file_with_nothing_to_read_instead_rejects_its_task_and_names_what_could_make_one():
    raw = [step("image-to-image", 0, image="lighthouse-storm.jpg"), step("video-classification", 1, video="storm.mp4")]
    plan, repairs = validate_plan(raw, TASKS, "Make me a picture of a lighthouse in a storm and a short clip of it")
    assert plan.tasks == []
    reasons = [r["reason"] for r in repairs]
    assert any(r.startswith("rejected: task 0 (image-to-image): argument 'image' reads 'lighthouse-storm.jpg'")
               and "the request gives no image" in r and "text-to-image" in r for r in reasons)
    assert any("text-to-video" in r for r in reasons)


def test_a_table_file_the_request_does_not_give_rejects_its_task():
    raw = [step("table-question-answering", 0, table="data.csv", question="which month?")]
    plan, repairs = validate_plan(raw, TASKS, "Which month had the most rain?")
    assert plan.tasks == [] and "reads 'data.csv'" in repairs[0]["reason"]
    ok = [step("table-question-answering", 0, table="rain.csv", question="which month?")]
    assert validate_plan(ok, TASKS, "In rain.csv, which month had the most rain?")[0].as_list()[0]["args"]["table"] == "rain.csv"



def test_a_table_file_named_wrong_reads_the_requests_one_table():
    # like a media file: with exactly one table in the request, a name it does not give reads that table
    raw = [step("tabular-classification", 0, table="loans.csv"), step("table-question-answering", 1, table="data.csv",
                                                                     question="¿cuántos tienen menos de 25?")]
    plan, repairs = validate_plan(raw, TASKS, "Predice qué préstamos de solicitantes.csv fallarán; ¿cuántos tienen menos de 25?")
    assert [t.args["table"] for t in plan.tasks] == ["solicitantes.csv", "solicitantes.csv"]
    assert "using its table 'solicitantes.csv'" in repairs[0]["reason"]
    two = "compare a.csv with b.csv"
    assert validate_plan(raw[:1], TASKS, two)[0].tasks == []  # two tables: which one is not guessed


def test_a_file_from_the_conversation_so_far_can_be_read():
    raw = [step("canny-text-to-image", 0, image="/images/f16d.png", text="a zoo")]
    history = "Sure, the canny image is at /images/f16d.png."
    # the request itself gives no file: the map was made in an earlier turn, and is drawn along as written
    plan, repairs = validate_plan(raw, TASKS, f"{history}\nnow draw a zoo along it", given=[])
    assert [t.task for t in plan.tasks] == ["canny-text-to-image"] and repairs == []


async def test_the_planner_re_asks_with_the_missing_input_and_reads_the_conversation():
    wrong = {"tasks": [step("image-to-image", 0, image="bird.jpg")]}
    right = {"tasks": [step("text-to-image", 0, text="a small bird")]}
    llm = script(wrong, right)
    result = await plan_with(llm, {n: TASKS[n] for n in ("image-to-image", "text-to-image")}, "draw a small bird")
    assert [t.task for t in result.plan.tasks] == ["text-to-image"]
    assert "reads 'bird.jpg'" in llm.prompts[1][-1].content and "text-to-image" in llm.prompts[1][-1].content

    follow = script({"tasks": [step("image-to-video", 0, image="/out/bird.png")]})
    history = [("human", "draw a small bird"), ("ai", "I drew it: /out/bird.png")]
    result = await plan_with(follow, {n: TASKS[n] for n in ("image-to-video", "text-to-image")}, "now animate it",
                             history=history)
    assert [t.task for t in result.plan.tasks] == ["image-to-video"] and len(follow.prompts) == 1


# ----- condition maps


def test_an_edit_of_a_condition_map_is_drawn_along_it():
    raw = [step("openpose-control", 0, image="yoga.jpg"),
           step("image-text-to-image", 1, image="<resource>-0", prompt="an astronaut on the moon")]
    plan, repairs = validate_plan(raw, TASKS, "same pose as yoga.jpg but an astronaut on the moon")
    assert plan.as_list()[1] == {"task": "openpose-text-to-image", "id": 1, "dep": [0],
                                 "args": {"image": "<resource>-0", "text": "an astronaut on the moon"}}
    assert "drawn along it by openpose-text-to-image" in repairs[0]["reason"]
    no_text = [step("canny-control", 0, image="a.jpg"), step("image-to-image", 1, image="<resource>-0")]
    plan, repairs = validate_plan(no_text, TASKS, "edges of a.jpg then something")
    assert [t.task for t in plan.tasks] == ["canny-control"] and "canny-text-to-image" in repairs[0]["reason"]


def test_a_drawing_along_a_map_never_reads_a_picture_made_by_another_task():
    # "segment kitchen.jpg, draw a modern kitchen along it, then a rustic one along the same map"
    raw = [step("image-segmentation", 0, image="kitchen.jpg"),
           step("seg-text-to-image", 1, image="<resource>-0", text="a modern kitchen"),
           step("seg-text-to-image", 2, image="<resource>-1", text="a rustic kitchen")]
    request = "segmenta kitchen.jpg y dibuja una cocina moderna con ese mapa, y luego una rústica con el mismo mapa"
    assert problems(read_plan(raw)[0], PlanContext.of(TASKS, request)) == [
        "task 2: seg-text-to-image draws along a map, not on the picture '<resource>-1' (image-segmentation "
        "makes its map)"]
    plan, repairs = validate_plan(raw, TASKS, request)
    assert [(t.task, t.args["image"]) for t in plan.tasks] == [
        ("image-segmentation", "kitchen.jpg"), ("seg-text-to-image", "<resource>-0"),
        ("seg-text-to-image", "<resource>-0")]
    assert "nearest earlier map of its kind, task 0" in repairs[0]["reason"]
    # a generated picture with no map of it yet: its map is made first, then drawn along
    raw = [step("text-to-image", 0, text="a small house"), step("depth-text-to-image", 1, image="<resource>-0",
                                                                text="the house in winter")]
    plan, _ = validate_plan(raw, TASKS, "画一座小房子，再按它的深度画一个冬天的版本")
    assert plan.as_list() == [
        {"task": "text-to-image", "id": 0, "dep": [], "args": {"text": "a small house"}},
        {"task": "depth-estimation", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}},
        {"task": "depth-text-to-image", "id": 2, "dep": [1],
         "args": {"image": "<resource>-1", "text": "the house in winter"}}]


def test_maps_that_taskbench_edits_and_drawings_along_another_map_stay():
    depth_edit = [step("depth-estimation", 0, image="a.jpg"),
                  step("image-text-to-image", 1, image="<resource>-0", prompt="make it blue")]
    assert validate_plan(depth_edit, TASKS, "depth of a.jpg, then edit it blue")[0].as_list()[1]["task"] == "image-text-to-image"
    other_map = [step("hed-control", 0, image="a.jpg"), step("canny-text-to-image", 1, image="<resource>-0", text="a fox")]
    assert problems(read_plan(other_map)[0], PlanContext.of(TASKS, "a.jpg")) == []


def test_a_drawing_on_a_photo_the_user_gives_draws_along_that_photos_map():
    # "take the pose from kick.jpg, make a knight doing it, then animate it", in any language
    raw = [step("openpose-text-to-image", 0, image="photos/kick.jpg", text="a knight in armor"),
           step("image-to-video", 1, image="<resource>-0")]
    request = "参考 photos/kick.jpg 的姿势，画一个骑士，然后让它动起来"
    assert problems(read_plan(raw)[0], PlanContext.of(TASKS, request)) == [
        "task 0: openpose-text-to-image draws along a map, not on the picture 'photos/kick.jpg' (openpose-control "
        "makes its map)"]
    plan, repairs = validate_plan(raw, TASKS, request)
    assert problems(plan, PlanContext.of(TASKS, request)) == []
    assert plan.as_list() == [
        {"task": "openpose-control", "id": 0, "dep": [], "args": {"image": "photos/kick.jpg"}},
        {"task": "openpose-text-to-image", "id": 1, "dep": [0], "args": {"image": "<resource>-0", "text": "a knight in armor"}},
        {"task": "image-to-video", "id": 2, "dep": [1], "args": {"image": "<resource>-1"}}]
    assert "openpose-control" in repairs[0]["reason"] and "photos/kick.jpg" in repairs[0]["reason"]
    # the map the plan already makes of that photo is read; depth and segments have their own makers
    raw = [step("depth-estimation", 0, image="attic.jpg"), step("depth-text-to-image", 1, image="attic.jpg", text="a studio"),
           step("seg-text-to-image", 2, image="attic.jpg", text="a garden")]
    plan, _ = validate_plan(raw, TASKS, "attic.jpg: depth drawing of a studio, segment drawing of a garden")
    assert [(t.task, t.args["image"]) for t in plan.tasks] == [
        ("depth-estimation", "attic.jpg"), ("depth-text-to-image", "<resource>-0"),
        ("image-segmentation", "attic.jpg"), ("seg-text-to-image", "<resource>-2")]


@pytest.mark.parametrize("request_text", [
    "take the pose from dancer.jpg and the content of park.jpg and make a new picture",
    "用 dancer.jpg 的姿势和 park.jpg 的内容生成一张新图片",
    "usa la pose de dancer.jpg y el contenido de park.jpg para crear una imagen nueva",
])
def test_an_edit_of_another_photo_beside_a_map_nothing_reads_is_the_drawing_along_that_map(request_text):
    raw = [step("openpose-control", 0, image="dancer.jpg"),
           step("image-text-to-image", 1, image="park.jpg", prompt="add the content of park.jpg to the pose")]
    plan, repairs = validate_plan(raw, TASKS, request_text)
    assert plan.as_list() == [
        {"task": "openpose-control", "id": 0, "dep": [], "args": {"image": "dancer.jpg"}},
        {"task": "image-to-text", "id": 1, "dep": [], "args": {"image": "park.jpg"}},
        {"task": "openpose-text-to-image", "id": 2, "dep": [0, 1], "args": {"image": "<resource>-0", "text": "<resource>-1"}}]
    assert [r["pass"] for r in repairs] == ["half-pairs"] and "which no task reads" in repairs[0]["reason"]
    # what the edit makes is still read by the tasks after it
    animated = [*raw, step("image-to-video", 2, image="<resource>-1")]
    plan, _ = validate_plan(animated, TASKS, request_text)
    assert [(t.task, t.args.get("image")) for t in plan.tasks][2:] == [
        ("openpose-text-to-image", "<resource>-0"), ("image-to-video", "<resource>-2")]


def test_maps_alone_and_edits_of_the_maps_own_photo_or_beside_a_drawing_stay():
    cases = [
        ([step("canny-control", 0, image="a.jpg")], "canny edges of a.jpg"),
        # the edges of a.jpg, and a.jpg itself in the snow: both asked for
        ([step("canny-control", 0, image="a.jpg"), step("image-text-to-image", 1, image="a.jpg", prompt="in the snow")],
         "give me the edges of a.jpg, and a.jpg in the snow"),
        # a map that a drawing reads, and an edit of another photo
        ([step("canny-control", 0, image="a.jpg"), step("canny-text-to-image", 1, image="<resource>-0", text="a fox"),
          step("image-text-to-image", 2, image="b.jpg", prompt="make it stormy")],
         "draw a fox along the edges of a.jpg and make b.jpg stormy"),
    ]
    for raw, request_text in cases:
        plan, repairs = validate_plan(raw, TASKS, request_text)
        assert [t.task for t in plan.tasks] == [s["task"] for s in raw] and repairs == []


def test_a_media_file_given_as_a_text_runs_the_task_that_does_that_job_on_the_file():
    raw = [step("depth-estimation", 0, image="shelf.jpg"), step("feature-extraction", 1, text="shelf.jpg"),
           step("zero-shot-classification", 2, text="leaf.png", candidate_labels=["rust", "mildew"])]
    request = "Ich brauche von shelf.jpg eine Tiefenkarte und ein Embedding; leaf.png: Rost?"
    assert len(problems(read_plan(raw)[0], PlanContext.of(TASKS, request))) == 2
    plan, repairs = validate_plan(raw, TASKS, request)
    assert problems(plan, PlanContext.of(TASKS, request)) == []
    assert [(t.task, t.args) for t in plan.tasks] == [
        ("depth-estimation", {"image": "shelf.jpg"}), ("image-feature-extraction", {"image": "shelf.jpg"}),
        ("zero-shot-image-classification", {"image": "leaf.png", "candidate_labels": ["rust", "mildew"]})]
    assert "feature-extraction was given the file 'shelf.jpg'" in repairs[0]["reason"]
    # a text that only mentions a file, a file the request does not give, or no such task offered: as written
    kept = [step("feature-extraction", 0, text="a photo named shelf.jpg"), step("text-classification", 1, text="x.jpg")]
    plan, repairs = validate_plan(kept, TASKS, "embed the words 'a photo named shelf.jpg' and classify the text of y.txt")
    assert [t.task for t in plan.tasks] == ["feature-extraction", "text-classification"] and repairs == []
    only_text = {n: TASKS[n] for n in ("feature-extraction",)}
    assert validate_plan([step("feature-extraction", 0, text="shelf.jpg")], only_text, "embed shelf.jpg")[0].tasks[0].task \
        == "feature-extraction"


def test_a_media_file_given_as_a_text_with_no_such_task_reads_the_files_text():
    # "translate what call.wav says"; "read the image example.jpg for me" (the text of each file first)
    raw = [step("translation", 0, text="call.wav", tgt_lang="fr"), step("text-to-speech", 1, text="example.jpg")]
    plan, repairs = validate_plan(raw, TASKS, "traduis call.wav en français, et lis-moi example.jpg")
    assert plan.as_list() == [
        {"task": "automatic-speech-recognition", "id": 0, "dep": [], "args": {"audio": "call.wav"}},
        {"task": "translation", "id": 1, "dep": [0], "args": {"text": "<resource>-0", "tgt_lang": "fr"}},
        {"task": "image-to-text", "id": 2, "dep": [], "args": {"image": "example.jpg"}},
        {"task": "text-to-speech", "id": 3, "dep": [2], "args": {"text": "<resource>-2"}}]
    assert "reads the file's text" in repairs[0]["reason"]
    # the plan's own transcription of that file is read; a picture made from a text keeps its text
    raw = [step("automatic-speech-recognition", 0, audio="rec/call.wav"), step("summarization", 1, text="call.wav"),
           step("text-to-image", 2, text="example.jpg")]
    plan, _ = validate_plan(raw, TASKS, "summarize rec/call.wav, and draw example.jpg")
    assert [(t.task, t.args) for t in plan.tasks] == [
        ("automatic-speech-recognition", {"audio": "rec/call.wav"}), ("summarization", {"text": "<resource>-0"}),
        ("text-to-image", {"text": "example.jpg"})]


def test_a_picture_given_as_the_text_of_a_drawing_along_a_map_is_drawn_from_its_caption():
    # JARVIS's demo "based on pose of d.jpg and content of e.jpg, show me a new image", here in French
    raw = [step("openpose-text-to-image", 0, image="/examples/d.jpg", text="/examples/e.jpg")]
    request = "à partir de la pose de /examples/d.jpg et du contenu de /examples/e.jpg, montre-moi une nouvelle image"
    plan, repairs = validate_plan(raw, TASKS, request)
    assert problems(plan, PlanContext.of(TASKS, request)) == []
    steps = {t.task: t for t in plan.tasks}
    assert sorted(steps) == ["image-to-text", "openpose-control", "openpose-text-to-image"]
    assert steps["image-to-text"].args == {"image": "/examples/e.jpg"}
    assert steps["openpose-control"].args == {"image": "/examples/d.jpg"}
    assert steps["openpose-text-to-image"].args == {"image": f"<resource>-{steps['openpose-control'].id}",
                                                     "text": f"<resource>-{steps['image-to-text'].id}"}
    assert {r["pass"] for r in repairs} == {"photo-maps", "media-text"}
    # an image edit whose prompt is a target picture is TaskBench's way of writing a style transfer: as written
    edit = [step("image-to-image", 0, image="street.jpg", prompt="target_example.png")]
    assert validate_plan(edit, TASKS, "make street.jpg look like target_example.png")[1] == []


async def test_the_planner_draws_along_a_map_of_an_earlier_turn_and_maps_a_photo_of_this_one():
    drawing = {"tasks": [step("openpose-text-to-image", 0, image="/runs/r1/outputs/pose.png", text="a knight")]}
    history = [("human", "make a pose map of kick.jpg"), ("ai", "The pose map is /runs/r1/outputs/pose.png.")]
    llm = script(drawing)
    result = await plan_with(llm, TASKS, "now draw a knight along it", history=history)
    assert [t.task for t in result.plan.tasks] == ["openpose-text-to-image"] and len(llm.prompts) == 1
    llm = script({"tasks": [step("openpose-text-to-image", 0, image="kick.jpg", text="a knight")]})
    result = await plan_with(llm, TASKS, "draw a knight in the pose of kick.jpg")
    assert [t.task for t in result.plan.tasks] == ["openpose-control", "openpose-text-to-image"]
    assert len(llm.prompts) == 1  # completed, not re-asked


def test_a_map_the_plan_makes_is_drawn_along_as_written():
    chained = [step("canny-control", 0, image="a.jpg"), step("canny-text-to-image", 1, image="<resource>-0", text="a fox")]
    assert validate_plan(chained, TASKS, "canny edges of a.jpg, then a fox along them")[1] == []
    # ids written out of order are kept: the map task takes the next free id
    raw = [step("image-to-text", 5, image="a.jpg"), step("canny-text-to-image", 2, image="a.jpg", text="<resource>-5")]
    plan, _ = validate_plan(raw, TASKS, "caption a.jpg, draw the caption along its edges")
    assert [(t.id, t.task, t.args["image"]) for t in plan.tasks] == [
        (5, "image-to-text", "a.jpg"), (6, "canny-control", "a.jpg"), (2, "canny-text-to-image", "<resource>-6")]


# ----- what the user wants back


def test_wants_are_read_and_checked_against_what_the_tasks_make():
    assert stated_wants({"wants": ["Image", "audio", "audio", "smell"], "tasks": []}) == ["image", "audio"]
    assert stated_wants([]) is None and stated_wants({"tasks": []}) is None
    plan, _ = read_plan([step("image-to-text", 0, image="a.jpg")])
    assert undelivered(plan, ["text", "audio"], TASKS) == ["audio"]
    assert delivered_kinds([step("image-to-text", 0, image="a.jpg"), step("text-to-speech", 1, text="<resource>-0")],
                           TASKS) == ["audio"]


async def test_a_plan_that_makes_none_of_a_wanted_kind_is_kept_with_a_note():
    tasks = {n: TASKS[n] for n in ("image-to-text", "text-to-speech")}
    short = {"wants": ["text", "audio"], "tasks": [step("image-to-text", 0, image="a.jpg")]}
    llm = script(short, structured=True)
    result = await plan_with(llm, tasks, "describe a.jpg and tell me out loud")
    assert [t.task for t in result.plan.tasks] == ["image-to-text"] and result.wants == ["text", "audio"]
    assert len(llm.prompts) == 1 and llm.schemas[0]["required"] == ["wants", "tasks"]
    note = [r["reason"] for r in result.repairs if r["pass"] == "planner"]
    assert note and "no task of the plan makes audio" in note[0] and "text-to-speech" in note[0]
    whole = {"wants": ["text", "audio"], "tasks": [step("image-to-text", 0, image="a.jpg"),
                                                   step("text-to-speech", 1, text="<resource>-0")]}
    result = await plan_with(script(whole, structured=True), tasks, "describe a.jpg and tell me out loud")
    assert len(result.plan.tasks) == 2 and not result.repairs


async def test_an_empty_second_answer_does_not_replace_a_first_with_tasks():
    tasks = {n: TASKS[n] for n in ("image-to-text", "text-to-speech", "automatic-speech-recognition")}
    first = {"wants": ["text", "audio"], "tasks": [step("image-to-text", 0, image="a.jpg"),
                                                   step("automatic-speech-recognition", 1, audio="<resource>-0")]}
    llm = script(first, {"wants": [], "tasks": []}, structured=True)
    result = await plan_with(llm, tasks, "describe a.jpg with your voice")
    assert len(llm.prompts) == 2 and "makes no audio" in llm.prompts[1][-1].content
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]
    assert any("not used (it has no task)" in r["reason"] for r in result.repairs)
    better = {"wants": ["text", "audio"], "tasks": [step("image-to-text", 0, image="a.jpg"),
                                                    step("text-to-speech", 1, text="<resource>-0")]}
    result = await plan_with(script(first, better, structured=True), tasks, "describe a.jpg with your voice")
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert result.repairs[0]["reason"].startswith("re-asked after:")


def test_demonstration_answers_state_what_they_deliver():
    from hugginggpt.prompts import load_demonstrations

    for demo in load_demonstrations():
        assert set(demo.get("wants", delivered_kinds(demo["plan"], TASKS))) <= {"text", "image", "audio", "video"}
