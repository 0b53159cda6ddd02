"""Reference repairs: arguments that clearly mean an earlier task's output are pointed at it.

Small planners write a task's own id, a made-up file name or a placeholder text where
``<resource>-N`` belongs; these tests pin what is repaired, what is left alone, and that every
repair is recorded with its reason.
"""

import pytest

from hugginggpt.agent.plan.check import problems
from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.parse import read_plan
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.tools.resources.mentions import listed_files, request_files, table_files
from hugginggpt.tools import task_table


@pytest.fixture(scope="module")
def known():
    return dict(task_table())


def reasons(repairs):
    return " | ".join(r["reason"] for r in repairs)


def step(task, id, **args):
    return {"task": task, "id": id, "dep": [-1], "args": args}


def test_self_reference_points_to_the_nearest_earlier_producer_of_that_kind(known):
    raw = [step("text-to-image", 0, text="a cat"), step("image-to-text", 1, image="<resource>-0"),
           step("object-detection", 2, image="<resource>-2")]
    plan, repairs = validate_plan(raw, known, "Draw a cat, caption it and find the objects in it")
    assert plan.by_id[2].args == {"image": "<resource>-0"}  # task 1 makes text, not an image
    assert plan.by_id[2].dep == [0]
    assert "its own output pointed to task 0 (text-to-image)" in reasons(repairs)


def test_reference_to_a_missing_task_is_redirected_when_a_producer_exists(known):
    raw = [step("automatic-speech-recognition", 0, audio="talk.wav"), step("summarization", 1, text="<resource>-7")]
    plan, repairs = validate_plan(raw, known, "Transcribe talk.wav and summarize it")
    assert plan.by_id[1].args["text"] == "<resource>-0"
    assert "missing task 7 pointed to task 0" in reasons(repairs)


def test_self_reference_of_the_first_task_uses_the_one_file_the_request_names(known):
    plan, repairs = validate_plan([step("image-classification", 0, image="<resource>-0")], known,
                                  "What is in example.jpg?")
    assert plan.by_id[0].args == {"image": "example.jpg"}
    assert "replaced by the request's image 'example.jpg'" in reasons(repairs)


def test_unrepairable_self_reference_is_still_rejected(known):
    plan, repairs = validate_plan([step("image-classification", 0, image="<resource>-0")], known,
                                  "Compare a.jpg with b.jpg")  # two images: no way to tell which
    assert plan.tasks == []
    assert "refers to its own output" in reasons(repairs)


def test_a_follow_ups_text_read_as_a_missing_result_reads_the_conversations_last_answer(known):
    answer = 'Here is the transcript: "Yesterday I finished the login page. No blockers."'
    request = "transcribe standup.wav\n" + answer + "\nnow summarize it in one line"
    plan, repairs = validate_plan([step("summarization", 0, text="<resource>-0")], known, request,
                                  given=[], words="now summarize it in one line", answer_before=answer)
    assert plan.by_id[0].args == {"text": "Yesterday I finished the login page. No blockers."}  # the quoted passage
    assert "reads the text of the conversation's last answer" in reasons(repairs)
    # several passages quoted, or none: the whole answer; any script's quotation marks
    poem = "Quiet pond at dusk\na frog leaps in"
    plan, _ = validate_plan([step("text-to-speech", 0, text="<resource>-3")], known, "read it aloud",
                            answer_before=poem)
    assert plan.by_id[0].args == {"text": poem}
    plan, _ = validate_plan([step("translation", 0, text="<resource>-0", tgt_lang="en")], known, "再翻译成英文",
                            answer_before="转写结果：“下周一开会。”")
    assert plan.by_id[0].args["text"] == "下周一开会。"
    # a first line ending in a colon introduces the text (any script's colon); a colon inside a line does not
    for answer, text in [("Here it is:\nWaves fold the light,\nthe gulls circle.", "Waves fold the light,\nthe gulls circle."),
                         ("这是译文：\n明天见。", "明天见。"), ("Note: the shop opens at 9.", "Note: the shop opens at 9."),
                         ("Here it is:", "Here it is:")]:
        plan, _ = validate_plan([step("text-to-speech", 0, text="<resource>-0")], known, "read it aloud",
                                answer_before=answer)
        assert plan.by_id[0].args["text"] == text, answer
    # an earlier task that writes a text is read first; without a conversation the task is still rejected
    raw = [step("automatic-speech-recognition", 0, audio="a.wav"), step("summarization", 1, text="<resource>-1")]
    plan, _ = validate_plan(raw, known, "Transcribe a.wav and summarize it", answer_before="a quote: 'not this'")
    assert plan.by_id[1].args == {"text": "<resource>-0"}
    plan, repairs = validate_plan([step("summarization", 0, text="<resource>-0")], known, "summarize it")
    assert plan.tasks == [] and "refers to its own output" in reasons(repairs)


def test_made_up_media_file_becomes_the_earlier_output(known):
    raw = [step("text-to-image", 0, text="a red car"), step("image-segmentation", 1, image="generated_image.png")]
    plan, repairs = validate_plan(raw, known, "Generate an image of a red car and segment it")
    assert plan.by_id[1].args["image"] == "<resource>-0"
    assert "names a file the request does not mention" in reasons(repairs)


def test_made_up_media_file_without_producer_becomes_the_request_file(known):
    plan, _ = validate_plan([step("depth-estimation", 0, image="image.jpg")], known, "Estimate depth in photo.png")
    assert plan.by_id[0].args["image"] == "photo.png"


def test_files_the_request_names_and_urls_are_kept(known):
    raw = [step("text-to-image", 0, text="a dog"), step("image-classification", 1, image="example.jpg"),
           step("image-classification", 2, image="https://x.org/a.png")]
    plan, repairs = validate_plan(raw, known, "Draw a dog. Also classify example.jpg and https://x.org/a.png")
    assert [t.args["image"] for t in plan.tasks[1:]] == ["example.jpg", "https://x.org/a.png"]
    assert repairs == []


def test_placeholder_text_becomes_the_earlier_text_output(known):
    raw = [step("image-to-text", 0, image="example.jpg"),
           step("text-to-speech", 1, text="<the description>"),
           step("translation", 2, text="{output_of_task_1}")]
    plan, repairs = validate_plan(raw, known, "Describe example.jpg, read it aloud and translate it")
    assert plan.by_id[1].args["text"] == "<resource>-0"
    assert plan.by_id[2].args["text"] == "<resource>-0"  # task 1 makes audio, so text comes from 0
    assert reasons(repairs).count("is a placeholder for an earlier result") == 2


@pytest.mark.parametrize("request_text", ["Describe example.jpg and read the description aloud",
                                          "描述一下 example.jpg，然后把描述朗读出来"])
def test_words_standing_for_an_earlier_result_are_left_as_written_in_any_language(known, request_text):
    raw = [step("image-to-text", 0, image="example.jpg"), step("text-to-speech", 1, text="The description of the image")]
    plan, repairs = validate_plan(raw, known, request_text)
    assert plan.by_id[1].args["text"] == "The description of the image"  # a runnable plan is not guessed at
    assert repairs == []


def test_text_taken_from_the_request_is_never_replaced(known):
    raw = [step("image-to-text", 0, image="example.jpg"),
           step("text-to-image", 1, text="a generated picture of a sunset")]
    plan, repairs = validate_plan(raw, known, "Caption example.jpg, and draw 'a generated picture of a sunset'")
    assert plan.by_id[1].args["text"] == "a generated picture of a sunset"
    assert repairs == []


def test_without_a_request_only_broken_references_are_repaired(known):
    raw = [step("text-to-image", 0, text="a cat"), step("image-to-text", 1, image="output.png"),
           step("image-to-text", 2, image="<resource>-2")]
    plan, _ = validate_plan(raw, known)
    assert plan.by_id[1].args["image"] == "output.png"
    assert plan.by_id[2].args["image"] == "<resource>-0"


def test_list_arguments_are_repaired_item_by_item(known):
    raw = [step("image-to-text", 0, image="a.jpg"), step("image-to-text", 1, image="b.jpg"),
           step("sentence-similarity", 2, source_sentence="<resource>-0", sentences=["<resource>-2"])]
    plan, _ = validate_plan(raw, known, "Caption a.jpg and b.jpg and compare the captions")
    assert plan.by_id[2].args["sentences"] == ["<resource>-1"]
    assert plan.by_id[2].dep == [0, 1]


def test_request_files_by_kind_in_order():
    found = request_files("Use 'example.jpg', then b.PNG, talk.wav and https://x.org/clip.mp4; example.jpg again")
    assert found == {"image": ["example.jpg", "b.PNG"], "audio": ["talk.wav"], "video": ["https://x.org/clip.mp4"]}


def test_file_names_written_against_unspaced_scripts_are_found():
    # Chinese, Japanese and Korean text glue the next word to a name; a name in those scripts stays whole
    assert request_files("我想检查一张example.jpg里是否有车")["image"] == ["example.jpg"]
    assert request_files("你好，我有一张名为example.jpg的图片，还有音频文件talk.wav中的内容")["audio"] == ["talk.wav"]
    assert request_files("このポスターflyer.jpgに何が書いてある？")["image"] == ["flyer.jpg"]
    assert request_files("match.mp4에서 무슨 스포츠?")["video"] == ["match.mp4"]
    assert request_files("庭.jpg の奥行きと ポーズ参考.jpg")["image"] == ["庭.jpg", "ポーズ参考.jpg"]
    assert request_files("打开 /data/猫example.jpg")["image"] == ["/data/猫example.jpg"]
    assert request_files("画像は/tmp/猫/in.png です")["image"] == ["/tmp/猫/in.png"]
    assert table_files("根据sales.csv，哪个城市最高？") == ["sales.csv"]
    assert request_files("photo.jpgs are not a.jpg_old nor b.jpg2") == {"image": [], "audio": [], "video": []}
    # two names glued to one word of such a script are two names
    assert request_files("比较a.jpg和b.jpg哪张更亮")["image"] == ["a.jpg", "b.jpg"]
    assert request_files("a.jpgとb.jpgを比べて")["image"] == ["a.jpg", "b.jpg"]
    assert table_files("a.csv和b.csv里") == ["a.csv", "b.csv"]
    assert request_files("版本v1.2里的a.jpg")["image"] == ["a.jpg"]


def test_files_written_as_a_list_are_found_in_any_language():
    assert listed_files("denoise both takes (take1.wav, take2.wav) and transcribe them") == [["take1.wav", "take2.wav"]]
    assert listed_files("A: /ex/a.jpg, B: /ex/b.jpg, C: /ex/c.jpg, how many zebras?") == [
        ["/ex/a.jpg", "/ex/b.jpg", "/ex/c.jpg"]]
    assert listed_files("比较a.jpg和b.jpg") == [["a.jpg", "b.jpg"]]
    assert listed_files("x.jpg und y.jpg, dann talk.wav et song.wav") == [["x.jpg", "y.jpg"], ["talk.wav", "song.wav"]]
    # a clause between two files, another kind between them, or one file: no list
    assert listed_files("the pose of d.jpg and the content of e.jpg") == []
    assert listed_files("a.jpg, talk.wav, b.jpg") == []
    assert listed_files("a.jpg, a.jpg") == []


def test_a_media_argument_that_describes_instead_of_naming_a_file_is_repaired(known):
    raw = [step("text-to-image", 0, text="a cat"), step("image-to-text", 1, image="the generated image"),
           step("image-classification", 2, image="./photos/example.jpg")]
    plan, repairs = validate_plan(raw, known, "Draw a cat and caption it; classify example.jpg too")
    assert plan.by_id[1].args["image"] == "<resource>-0"
    assert plan.by_id[2].args["image"] == "./photos/example.jpg"  # the request's file, in another folder


@pytest.mark.parametrize("request_text, value", [
    ("根据这段话回答：长城有多长？'长城是中国古代的军事防御工程，总长度超过两万一千公里。'",
     "长城是中国古代的军事防御工程，总长度超过两万一千公里。"),
    ("Quel est le total de ces trois lignes : pain 2 €, lait 1 €, œufs 3 € ?", "pain 2 €, lait 1 €, œufs 3 €"),
])
def test_a_text_written_as_a_table_cannot_run_and_its_task_is_taken_out(known, request_text, value):
    from hugginggpt.agent.plan.check import problems
    from hugginggpt.agent.plan.parse import read_plan

    raw = [step("tabular-classification", 0, table=value)]
    assert problems(read_plan(raw)[0], PlanContext.of(known, request_text)) == [
        f"task 0: argument 'table': {value[:60]!r} is no file the request names"]
    plan, repairs = validate_plan(raw, known, request_text)
    assert plan.tasks == []
    assert "rejected" in reasons(repairs) and "argument 'table'" in reasons(repairs)
    assert reasons(repairs).endswith("(the request gives no table)")  # no task makes a table file to name


def test_a_text_read_through_a_table_task_taken_out_is_read_as_it_was_given(known):
    request_text = ("The question is in example.wav. Here is the document text: 'Renewable energy lowers emissions "
                    "and reliance on fossil fuels.'")
    passage = "Renewable energy lowers emissions and reliance on fossil fuels."
    raw = [step("automatic-speech-recognition", 0, audio="example.wav"),
           step("tabular-classification", 1, table=passage),
           step("question-answering", 2, question="<resource>-0", context="<resource>-1")]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [t.task for t in plan.tasks] == ["automatic-speech-recognition", "question-answering"]
    assert plan.by_id[2].args == {"question": "<resource>-0", "context": passage}
    assert "reads that text" in reasons(repairs)
    # a made-up table file passes nothing on: its reader goes with it
    raw[1] = step("tabular-classification", 1, table="energy.csv")
    plan, _ = validate_plan(raw, known, request_text)
    assert [t.task for t in plan.tasks] == ["automatic-speech-recognition"]


@pytest.mark.parametrize("request_text, value, file", [
    ("I have a spreadsheet loans.csv, and I need to classify its rows.", "table loans.csv", "loans.csv"),
    ("orders_may.csv 里平均配送时间是多少？", "平均配送时间", "orders_may.csv"),
])
def test_a_table_argument_reads_the_request_s_file_its_words_hold_or_its_one_table(known, request_text, value, file):
    plan, repairs = validate_plan([step("table-question-answering", 0, table=value, question="?")], known, request_text)
    assert plan.by_id[0].args["table"] == file, reasons(repairs)


@pytest.mark.parametrize("request_text, value", [
    ("what was the Q3 revenue according to charts/q3.png?", "charts/q3.png"),
    ("Given images A: /examples/a.jpg, B: /examples/b.jpg, how many zebras are there?", "/examples/a.jpg,/examples/b.jpg"),
    ("这张表 scan.jpg 里哪一行最贵？另外 prices.csv 也给你", "table scan.jpg"),
    ("¿Qué se dice en la reunión? reunion.mp3", "reunion.mp3"),
])
def test_a_picture_sound_or_video_given_as_a_table_cannot_run_and_its_task_is_taken_out(known, request_text, value):
    """No table task reads a table shown in a picture: the plan is asked again, even when the request gives a
    table file too (a guess of that file would answer from another source)."""
    from hugginggpt.agent.plan.check import problems
    from hugginggpt.agent.plan.parse import read_plan

    raw = [step("table-question-answering", 0, table=value, question="?")]
    found = problems(read_plan(raw)[0], PlanContext.of(known, request_text))
    assert len(found) == 1 and "not a table file" in found[0], found
    plan, repairs = validate_plan(raw, known, request_text)
    assert plan.tasks == [] and "rejected" in reasons(repairs) and "not a table file" in reasons(repairs)


def test_a_table_in_an_image_is_read_where_the_benchmark_s_tool_reads_one():
    """TaskBench's Tabular Classification reads a table shown in an image: under the domain's specs a gold plan
    giving it example.jpg runs as written, and a text given as that table still cannot."""
    from hugginggpt.eval.mapping import TaskBenchMapping

    tools = {"Tabular Classification": {"id": "Tabular Classification", "input-type": ["image"],
                                        "output-type": ["text"]}}
    known = TaskBenchMapping(tools).domain_specs()
    raw = [step("tabular-classification", 0, table="example.jpg")]
    plan, repairs = validate_plan(raw, known, "Please classify the table in the image 'example.jpg'.")
    assert plan.as_list()[0]["args"] == {"table": "example.jpg"} and repairs == []
    plan, _ = validate_plan([step("tabular-classification", 0, table="rows of numbers")], known,
                            "Please classify the table in the image 'example.jpg'.")
    assert plan.by_id[0].args["table"] == "example.jpg"  # the request's one image, as for any image argument


def test_a_table_argument_holding_another_name_is_not_read_as_a_file_the_request_gives(known):
    # "data.jpg" holds the letters of "a.jpg", the request's file, but names another file
    plan, _ = validate_plan([step("tabular-classification", 0, table="table data.jpg")], known, "classify a.jpg")
    assert plan.tasks == []


def test_fan_outs_and_kind_mismatches_are_left_as_planned(known):
    fan_out = [step("text-to-image", 0, text="a fox"), step("image-to-text", 1, image="<resource>-0"),
               step("depth-estimation", 2, image="<resource>-0")]  # task 1 makes text, not an image
    plan, repairs = validate_plan(fan_out, known, "Draw a fox, caption it and estimate its depth")
    assert plan.by_id[2].args == {"image": "<resource>-0"} and "past task" not in reasons(repairs)
    both_read = [step("translation", 0, text="hola"), step("summarization", 1, text="<resource>-0"),
                 step("text-to-speech", 2, text="<resource>-1"), step("question-answering", 3, question="Who?",
                                                                     context="<resource>-0")]
    plan, repairs = validate_plan(both_read, known, "Translate hola, summarize and speak it; answer Who? from it")
    assert plan.by_id[3].args["context"] == "<resource>-0"  # the previous step's output is already used
    assert "past task" not in reasons(repairs)
    alone = [step("image-classification", 0, image="a.png"), step("text-to-speech", 1, text="<resource>-0")]
    plan, repairs = validate_plan(alone, known, "Classify a.png and say the label")
    assert plan.by_id[1].args["text"] == "<resource>-0" and "past task" not in reasons(repairs)


def test_a_text_argument_reading_audio_reads_the_nearest_earlier_text_instead(known):
    """Chained by position, not by kind: the translation read the speech made of the transcript."""
    raw = [step("automatic-speech-recognition", 0, audio="talk.wav"), step("text-to-speech", 1, text="<resource>-0"),
           step("translation", 2, text="<resource>-1")]
    plan, repairs = validate_plan(raw, known, "Transcribe talk.wav, read the transcript aloud and translate it into French")
    assert plan.by_id[2].args["text"] == "<resource>-0" and plan.by_id[2].dep == [0]
    assert plan.by_id[1].args["text"] == "<resource>-0"
    assert ("argument 'text' read task 1 (text-to-speech), which makes no text: now reads task 0 "
            "(automatic-speech-recognition), the nearest earlier text producer") in reasons(repairs)


def test_a_text_argument_needs_a_task_that_writes_text_not_only_data(known):
    """A denoised recording (audio and its sources' data), an embedding or masks write no text: a translation of
    the cleaned recording reads the nearest earlier text, here the transcript, and with none it is taken out (the
    planner asks again). A label or an answer is text: it is read as planned."""
    raw = [step("automatic-speech-recognition", 0, audio="a.wav"), step("audio-to-audio", 1, audio="a.wav"),
           step("translation", 2, text="<resource>-1", tgt_lang="fr")]
    plan, repairs = validate_plan(raw, known, "Transcribe a.wav, clean it up and translate it into French")
    assert plan.by_id[2].args["text"] == "<resource>-0"
    assert "read task 1 (audio-to-audio), which makes no text: now reads task 0" in reasons(repairs)
    for maker, arg, value in [("audio-to-audio", "audio", "a.wav"), ("feature-extraction", "text", "hello"),
                              ("mask-generation", "image", "a.png")]:
        raw = [step(maker, 0, **{arg: value}), step("summarization", 1, text="<resource>-0")]
        plan, repairs = validate_plan(raw, known, f"{value}: do it and summarize")
        assert [t.task for t in plan.tasks] == [maker], maker
        assert f"reads task 0 ({maker}), which makes no text" in reasons(repairs)
    raw = [step("image-classification", 0, image="a.png"), step("summarization", 1, text="<resource>-0")]
    assert [t.task for t in validate_plan(raw, known, "classify a.png and sum it up")[0].tasks] == [
        "image-classification", "summarization"]


def test_a_step_no_longer_read_once_its_reader_reads_the_right_kind_is_taken_out(known):
    """An embedding of a drawing, read as the image of the next step: the next step now reads the drawing, and
    the embedding, whose text is the drawing and which nobody reads any more, cannot run and goes."""
    raw = [step("text-to-image", 0, text="a small house in the woods"), step("feature-extraction", 1, text="<resource>-0"),
           step("image-text-to-image", 2, image="<resource>-1", prompt="a winter version")]
    request = "Mach ein Bild von einem kleinen Haus im Wald, schätz dessen Tiefe und erzeug eine Winterversion"
    plan, repairs = validate_plan(raw, known, request)
    assert [t.task for t in plan.tasks] == ["text-to-image", "image-text-to-image"]
    assert plan.by_id[2].args["image"] == "<resource>-0"
    assert ("rejected: task 1 (feature-extraction): argument 'text' reads task 0 (text-to-image), which makes no text"
            in reasons(repairs))
    assert problems(plan, PlanContext.of(known, request)) == []


def test_an_image_argument_reading_a_label_reads_the_request_s_one_image(known):
    raw = [step("image-classification", 0, image="photo.jpg"), step("object-detection", 1, image="<resource>-0")]
    plan, repairs = validate_plan(raw, known, "Classify photo.jpg and find the objects in it")
    assert plan.by_id[1].args["image"] == "photo.jpg" and plan.by_id[1].dep == []
    assert "which makes no image: now the request's image 'photo.jpg'" in reasons(repairs)


def test_a_last_step_reading_a_wrong_kind_with_nothing_to_read_instead_is_taken_out(known):
    """Text-to-speech of a speech cannot run, and no other step reads it: it goes, nothing with it."""
    raw = [step("text-to-speech", 0, text="hello"), step("text-to-speech", 1, text="<resource>-0")]
    plan, repairs = validate_plan(raw, known, "Say hello, then say it again")
    assert [t.task for t in plan.tasks] == ["text-to-speech"]
    assert ("rejected: task 1 (text-to-speech): argument 'text' reads task 0 (text-to-speech), which makes no text, "
            "and no earlier task does") in reasons(repairs)
    assert problems(plan, PlanContext.of(known, "Say hello, then say it again")) == []


def test_a_wrong_kind_read_with_nothing_to_read_instead_is_left_for_execution(known):
    from hugginggpt.tools.table import ArgSpec, TaskSpec

    # read further: taking it out would take its readers with it
    raw = [step("text-to-speech", 0, text="hello"), step("text-to-speech", 1, text="<resource>-0"),
           step("audio-to-audio", 2, audio="<resource>-1")]
    plan, repairs = validate_plan(raw, known, "Say hello, say it again and clean that up")
    assert plan.by_id[1].args["text"] == "<resource>-0" and "makes no" not in reasons(repairs)
    # named among other words
    raw = [step("text-to-image", 0, text="a cat"), step("text-generation", 1, text="a poem about <resource>-0")]
    plan, repairs = validate_plan(raw, known, "Draw a cat and write a poem about it")
    assert len(plan.tasks) == 2 and "makes no" not in reasons(repairs)
    # a tool whose outputs are not declared may make anything: its readers are trusted
    echo = TaskSpec(name="echo", description="Shout a text back.", in_table=False,
                    args=[ArgSpec(name="text", kind="text", required=True, description="")])
    raw = [step("text-to-image", 0, text="a cat"), step("echo", 1, text="hi"), step("image-to-text", 2, image="<resource>-1")]
    plan, repairs = validate_plan(raw, {**known, "echo": echo}, "Draw a cat, echo hi and caption what the echo gives")
    assert plan.by_id[2].args["image"] == "<resource>-1" and "makes no" not in reasons(repairs)


@pytest.mark.parametrize("request_text", [
    "a bedtime story about a robot at the fair: write it, draw one picture for it, animate that picture, read it aloud",
    "Quiero un cuento sobre un robot en la feria: escríbelo, hazle un dibujo, anima ese dibujo y léemelo",
    "写一个机器人在集市迷路的睡前故事，给它画一张图，让图动起来，再把故事念给我听",
])
def test_a_task_that_reads_a_text_as_its_image_and_is_animated_is_the_drawing_of_that_text(known, request_text):
    """Chosen by kinds only (the request's language plays no part): the 'classification' reads a story and
    is animated as a picture; the one offered task making an image of a text is text-to-image. The
    reading-aloud then reads the story again, not the video."""
    raw = [step("text-generation", 0, text="a bedtime story about a robot"),
           step("image-classification", 1, image="<resource>-0"),
           step("image-to-video", 2, image="<resource>-1"), step("text-to-speech", 3, text="<resource>-2")]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [(t.task, t.args, t.dep) for t in plan.tasks] == [
        ("text-generation", {"text": "a bedtime story about a robot"}, []),
        ("text-to-image", {"text": "<resource>-0"}, [0]),
        ("image-to-video", {"image": "<resource>-1"}, [1]),
        ("text-to-speech", {"text": "<resource>-0"}, [0])]
    assert ("image-classification reads task 0 (text-generation), which makes no image, and what is read from "
            "it is image: text-to-image makes that from what it reads") in reasons(repairs)


def test_a_maker_given_a_text_as_its_image_makes_its_own_kind_from_the_text(known):
    raw = [step("text-generation", 0, text="a poem about rain"), step("image-to-video", 1, image="<resource>-0")]
    plan, _ = validate_plan(raw, known, "write a poem about rain and make a clip of it")
    assert [(t.task, t.args) for t in plan.tasks[1:]] == [("text-to-video", {"text": "<resource>-0"})]


@pytest.mark.parametrize("raw, request_text", [
    # a text made into audio: read aloud or made into music? two tasks do it; the misread task is taken out
    ([step("text-generation", 0, text="a poem"), step("audio-to-audio", 1, audio="<resource>-0"),
      step("automatic-speech-recognition", 2, audio="<resource>-1")], "a poem, as audio, then transcribed"),
    # an analysis nobody reads as media: no kind to make, taken out
    ([step("text-generation", 0, text="a poem"), step("image-classification", 1, image="<resource>-0")],
     "write a poem and classify it"),
])
def test_a_misread_task_with_no_single_maker_is_taken_out_as_before(known, raw, request_text):
    plan, repairs = validate_plan(raw, known, request_text)
    assert [t.task for t in plan.tasks] == ["text-generation"]
    assert "which makes no" in reasons(repairs) and "and no earlier task does" in reasons(repairs)
    assert "makes that from what it reads" not in reasons(repairs)


@pytest.mark.parametrize("raw, request_text, image", [
    ([step("text-generation", 0, text="a caption"), step("image-classification", 1, image="<resource>-0"),
      step("image-to-video", 2, image="<resource>-1")], "classify photo.jpg and animate it", "photo.jpg"),
    ([step("text-to-image", 0, text="a cat"), step("text-generation", 1, text="a story"),
      step("image-classification", 2, image="<resource>-1"), step("image-to-video", 3, image="<resource>-2")],
     "draw a cat, write a story, classify the cat and animate it", "<resource>-0"),
])
def test_a_misread_image_with_an_image_to_read_reads_it_and_keeps_its_task(known, raw, request_text, image):
    """The request's one image, or an earlier task's image, is what the argument meant: no task changes."""
    plan, repairs = validate_plan(raw, known, request_text)
    classify = next(t for t in plan.tasks if t.task == "image-classification")
    assert classify.args["image"] == image
    assert "makes that from what it reads" not in reasons(repairs)


def test_a_misread_image_in_a_request_that_gives_images_is_not_made_a_drawing(known):
    """With two pictures given (neither one the argument's obvious file), the task is taken out as before: a
    drawing of the text would leave the user's pictures unread."""
    raw = [step("text-generation", 0, text="a caption"), step("image-classification", 1, image="<resource>-0"),
           step("image-to-video", 2, image="<resource>-1")]
    plan, repairs = validate_plan(raw, known, "write a caption, classify a.jpg or b.jpg and animate it")
    assert [t.task for t in plan.tasks] == ["text-generation"]
    assert "makes that from what it reads" not in reasons(repairs)


@pytest.mark.parametrize("request_text", [
    "Detect what's in floor.jpg, answer 'are the workers wearing helmets?', and write a safety note on it",
    "检测 floor.jpg 里的东西，回答“工人戴安全帽了吗？”，再据此写一段安全提示",
])
def test_an_analysis_of_the_picture_the_same_task_drew_is_taken_out(known, request_text):
    """Kinds and names only: a detection of the boxes a detection drew finds nothing new; its reader reads the
    first detection, and the step is rejected (the planner asks again for what it stood for)."""
    raw = [step("object-detection", 0, image="floor.jpg"), step("object-detection", 1, image="<resource>-0"),
           step("image-to-text", 2, image="<resource>-1")]
    ctx = PlanContext.of(known, request_text)
    assert problems(read_plan(raw)[0], ctx) == [
        "task 1: object-detection reads the picture task 0 (object-detection) drew of its own input"]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [(t.task, t.args) for t in plan.tasks] == [("object-detection", {"image": "floor.jpg"}),
                                                      ("image-to-text", {"image": "<resource>-0"})]
    assert any(r["reason"].startswith("rejected: task 1 (object-detection): argument 'image' reads the picture task 0")
               for r in repairs)
    assert problems(plan, ctx) == []


@pytest.mark.parametrize("request_text", [
    "caption a1.jpg, then translate the caption into French twice over",
    "给 a1.jpg 配一段描述，再翻译成法语",
])
def test_a_translation_of_a_translation_into_the_same_language_goes(known, request_text):
    """The task table's ``settled_by``: a text already in ``tgt_lang`` translates to itself, so a translation reading
    a translation into the same language finds nothing new: it is taken out, its readers read the first."""
    raw = [step("image-to-text", 0, image="a1.jpg"), step("translation", 1, text="<resource>-0", tgt_lang="fr"),
           step("translation", 2, text="<resource>-1", tgt_lang="FR"), step("text-to-speech", 3, text="<resource>-2")]
    ctx = PlanContext.of(known, request_text)
    assert problems(read_plan(raw)[0], ctx) == [
        "task 2: translation reads the output of task 1 (translation) with the same tgt_lang"]
    plan, repairs = validate_plan(raw, known, request_text)
    assert [(t.task, t.args) for t in plan.tasks] == [
        ("image-to-text", {"image": "a1.jpg"}), ("translation", {"text": "<resource>-0", "tgt_lang": "fr"}),
        ("text-to-speech", {"text": "<resource>-1"})]
    assert "rejected: task 2 (translation): argument 'text' reads the output of task 1" in reasons(repairs)
    assert problems(plan, ctx) == []


def test_a_translation_written_on_a_translation_reads_the_caption_no_task_read(known):
    """Caption two pictures and translate both: the second translation written on the first reads the second
    caption, which no task read; nothing is taken out."""
    raw = [step("image-to-text", 0, image="a.jpg"), step("translation", 1, text="<resource>-0", tgt_lang="de"),
           step("image-to-text", 2, image="b.jpg"), step("translation", 3, text="<resource>-1", tgt_lang="de")]
    plan, repairs = validate_plan(raw, known, "caption a.jpg and b.jpg and translate both captions into German")
    assert [(t.task, t.args.get("text")) for t in plan.tasks] == [
        ("image-to-text", None), ("translation", "<resource>-0"),
        ("image-to-text", None), ("translation", "<resource>-2")]
    assert plan.by_id[3].dep == [2] and "now reads task 2 (image-to-text)" in reasons(repairs)
    assert "rejected" not in reasons(repairs)


def test_translations_into_other_languages_or_without_one_written_stay(known):
    for second in ({"tgt_lang": "de"}, {}, {"tgt_lang": "<resource>-0"}):
        raw = [step("translation", 0, text="The meeting moved to Thursday.", tgt_lang="fr"),
               step("translation", 1, text="<resource>-0", **second)]
        plan, repairs = validate_plan(raw, known, "translate 'The meeting moved to Thursday.' into French, then on")
        assert [t.task for t in plan.tasks] == ["translation", "translation"]
        assert not [r for r in repairs if r.get("pass") == "own-marks"]


def test_a_map_of_a_map_goes_and_other_repeated_image_steps_stay(known):
    raw = [step("text-to-image", 0, text="a house"), step("depth-estimation", 1, image="<resource>-0"),
           step("depth-estimation", 2, image="<resource>-1")]
    plan, _ = validate_plan(raw, known, "Draw a house and give me its depth map")
    assert [t.task for t in plan.tasks] == ["text-to-image", "depth-estimation"]
    # a restyling of a restyling, a detection in a segmentation's picture: steps that can be asked for
    raw = [step("image-to-image", 0, image="scan.jpg"), step("image-to-image", 1, image="<resource>-0"),
           step("image-segmentation", 2, image="<resource>-1"), step("object-detection", 3, image="<resource>-2")]
    plan, repairs = validate_plan(raw, known, "Upscale scan.jpg, colorize it, segment it, find objects in that")
    assert [t.task for t in plan.tasks] == ["image-to-image", "image-to-image", "image-segmentation", "object-detection"]
    assert not [r for r in repairs if r["reason"].startswith("rejected")]


@pytest.mark.parametrize("made_from", [False, True])
def test_a_media_step_reading_a_made_result_as_its_text_reads_its_text_only_when_asked(known, made_from):
    """By default a voice reading a video as its text is taken out (the planner asks again); with
    ``PlanContext.made_from`` it speaks the title the video was made from. A step that writes text, or a result
    made from no written text alone, is never given such a text."""
    from dataclasses import replace

    from hugginggpt.agent.plan.passes import validated

    def ctx(request):
        return replace(PlanContext.of(known, request), made_from=made_from)

    dubbed = [step("text-to-video", 0, text="An astronaut walks in space"), step("text-to-speech", 1, text="<resource>-0")]
    plan, repairs = validated(dubbed, ctx("generate a video titled 'An astronaut walks in space' and dub it"))
    if made_from:
        assert plan.by_id[1].args == {"text": "An astronaut walks in space"} and plan.by_id[1].dep == []
        assert "reads the text task 0 made it from" in reasons(repairs) and "rejected" not in reasons(repairs)
    else:
        assert [t.task for t in plan.tasks] == ["text-to-video"]
        assert "rejected: task 1 (text-to-speech)" in reasons(repairs)
    analysed = [step("text-to-image", 0, text="a tiny house"), step("feature-extraction", 1, text="<resource>-0")]
    assert [t.task for t in validated(analysed, ctx("draw a tiny house and embed it"))[0].tasks] == ["text-to-image"]
    for edited in ([step("image-to-video", 0, image="cat.png"), step("text-to-speech", 1, text="<resource>-0")],
                   [step("image-to-video", 0, image="cat.png", prompt="it jumps"),
                    step("text-to-speech", 1, text="<resource>-0")],
                   [step("image-text-to-image", 0, image="cat.png", prompt="make it night"),
                    step("text-to-video", 1, text="<resource>-0")]):
        assert [t.task for t in validated(edited, ctx("animate or edit cat.png, then the next"))[0].tasks] == [
            edited[0]["task"]]
