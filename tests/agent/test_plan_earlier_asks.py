"""A step that quotes an earlier ask of the conversation does that ask's work again: the ``earlier-asks`` pass
takes it out and points its readers at the answer the ask got. These tests pin what is taken out, what each
reader reads instead, and every case where the plan is left as it is."""

import pytest

from hugginggpt.agent.plan.context import given_files
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.agent.plan.preference import quoted_ask
from hugginggpt.tools import task_table


@pytest.fixture(scope="module")
def known():
    return dict(task_table())


def step(task, id, words, **args):
    return {"task": task, "id": id, "step": words, "args": args}


def planned(known, raw, turns, request):
    history = "\n".join(f"{ask}\n{answer}" for ask, answer in turns)
    plan, repairs = validate_plan(raw, known, f"{history}\n{request}", given=given_files(request), words=request,
                                  answer_before=turns[-1][1] if turns else None, turns=turns)
    return plan, [r for r in repairs if r.get("pass") == "earlier-asks"]


def test_a_text_made_one_turn_ago_is_read_from_its_answer_not_written_again(known):
    turns = [("write a two-line poem about the sea", "Waves fold the light into silver lines,\nthe gulls circle.")]
    raw = [step("text-generation", 0, "write a two-line poem about the sea", text="a two-line poem about the sea"),
           step("translation", 1, "translate the poem into German", text="<resource>-0", tgt_lang="de")]
    plan, repairs = planned(known, raw, turns, "and translate that into German")
    assert [t.task for t in plan.tasks] == ["translation"]
    assert plan.tasks[0].args == {"text": turns[0][1], "tgt_lang": "de"}
    assert plan.tasks[0].dep == []
    assert repairs[0]["task_id"] == 0 and "earlier ask 'write a two-line poem about the sea'" in repairs[0]["reason"]


def test_a_map_made_earlier_is_the_file_its_answer_names_that_the_ask_did_not(known):
    turns = [("Please generate a canny image based on /examples/f.jpg",
              "Sure. I used canny-control on /examples/f.jpg; the canny image is at /images/f16d.png.")]
    raw = [step("canny-control", 0, "generate a canny image based on /examples/f.jpg", image="/examples/f.jpg"),
           step("canny-text-to-image", 1, "draw a zoo along the canny image", image="<resource>-0",
                text="a photo of a zoo")]
    plan, _ = planned(known, raw, turns, 'then based on the above canny image and a prompt "a photo of a zoo", '
                                         'generate a new image.')
    assert plan.as_list() == [{"task": "canny-text-to-image", "id": 1, "dep": [], "step": raw[1]["step"],
                               "args": {"image": "/images/f16d.png", "text": "a photo of a zoo"}}]


def test_a_redone_step_nobody_reads_goes_in_any_script(known):
    turns = [("画一张雨中灯塔的图", "画好了：outputs/lighthouse.png")]
    raw = [step("text-to-image", 0, "画一张雨中灯塔的图", text="雨中灯塔"),
           step("depth-estimation", 1, "估计深度", image="outputs/lighthouse.png")]
    plan, repairs = planned(known, raw, turns, "它的深度图呢？")
    assert [t.task for t in plan.tasks] == ["depth-estimation"]
    assert repairs and repairs[0]["task_id"] == 0


def test_plans_that_do_new_work_stay_as_they_are(known):
    turns = [("translate 'The meeting moved to Friday afternoon' into German", "Das Treffen wurde verschoben.")]
    # the same kind of work on something new: the step's words are not the earlier ask
    raw = [step("translation", 0, "translate 'The meeting moved to Friday afternoon' into French",
                text="The meeting moved to Friday afternoon", tgt_lang="fr"),
           step("text-to-speech", 1, "read it aloud", text="<resource>-0")]
    plan, repairs = planned(known, raw, turns, "and into French, then read it aloud")
    assert [t.task for t in plan.tasks] == ["translation", "text-to-speech"] and not repairs
    # asked again: every step quotes the earlier ask, so the user wants it done again
    turns = [("draw a cat wearing a hat", "Here it is: outputs/cat.png")]
    raw = [step("text-to-image", 0, "draw a cat wearing a hat", text="a cat wearing a hat")]
    plan, repairs = planned(known, raw, turns, "again please")
    assert [t.task for t in plan.tasks] == ["text-to-image"] and not repairs
    # a step on a file this request gives is new work, whatever its words
    raw = [step("image-classification", 0, "classify the photo photo.jpg", image="photo.jpg"),
           step("text-generation", 1, "write a caption", text="<resource>-0")]
    turns = [("classify the photo photo.jpg", "A tabby cat.")]
    plan, repairs = planned(known, raw, turns, "do it for photo.jpg again and write a caption")
    assert len(plan.tasks) == 2 and not repairs


def test_a_reader_needing_what_the_answer_lacks_leaves_the_plan_alone(known):
    turns = [("make a picture of a red bicycle", "I could not make that picture, sorry.")]
    raw = [step("text-to-image", 0, "make a picture of a red bicycle", text="a red bicycle"),
           step("image-segmentation", 1, "segment it", image="<resource>-0")]
    plan, repairs = planned(known, raw, turns, "segment it")
    assert [t.task for t in plan.tasks] == ["text-to-image", "image-segmentation"] and not repairs


def test_without_a_conversation_or_step_words_nothing_is_read(known):
    raw = [step("text-to-image", 0, "draw a fox in the snow", text="a fox"),
           step("image-to-text", 1, "caption it", image="<resource>-0")]
    plan, repairs = planned(known, raw, [], "draw a fox in the snow and caption it")
    assert len(plan.tasks) == 2 and not repairs
    assert quoted_ask(None, (("draw a fox", "done"),)) is None
    assert quoted_ask("draw", (("draw a fox", "done"),)) is None  # too short to tell
    assert quoted_ask("Draw a FOX, please!", (("please draw a fox please", "done"),)) is not None


def test_long_conversations_and_steps_are_compared_in_linear_time(known):
    """Hostile input: asks and step words of many thousand letters, nearly alike (the worst case of a quadratic
    comparison), are compared in well under a second."""
    import time

    ask = "ab" * 20000
    turns = [(ask + "x", "made: outputs/a.png"), ("b" * 30000, "ok")]
    words = "ab" * 9000 + "c" * 3 + "ab" * 9000
    started = time.process_time()
    for _ in range(5):
        assert quoted_ask(words, turns) is None
    assert quoted_ask("ab" * 9000, turns) == turns[0]
    assert time.process_time() - started < 1.0


def test_the_conversation_gives_its_answered_asks_and_its_last_answer():
    """An ask is paired with the answer after it; an answer with no ask before it (a greeting the history opens
    with) is still the last answer a follow-up's "summarize it" reads; an ask not yet answered is no turn."""
    from langchain_core.messages import AIMessage, HumanMessage

    from hugginggpt.agent.plan.planner import conversation

    assert conversation([]) == ([], None)
    history = [AIMessage("Hello! What can I do?"), HumanMessage("Transcribe a.wav"), AIMessage("It says: hi."),
               HumanMessage("and b.wav?")]
    assert conversation(history) == ([("Transcribe a.wav", "It says: hi.")], "It says: hi.")
    assert conversation(history[:1]) == ([], "Hello! What can I do?")
