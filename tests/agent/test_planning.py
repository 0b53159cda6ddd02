"""Stage 1: the prompt the planner sees, lenient parsing, structured output and the one re-ask."""

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from hugginggpt.agent.plan import describe_tools
from hugginggpt.agent.plan.parse import (
    parse_plan_text,
    plan_schema,
    without_unfinished_task,
)
from hugginggpt.agent.plan.prompt import planning_messages
from hugginggpt.errors import PlanError
from hugginggpt.llm.content import cut_off, finish_reason
from hugginggpt.tools import task_table

from .conftest import ScriptedChatModel, plan_with, script

CAPTION = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.png"}},
           {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]


@pytest.fixture
def tasks(tools):
    return describe_tools([tools["image-to-text"], tools["text-to-speech"], tools["echo"]], task_table())


def test_prompt_lists_tasks_and_only_usable_demonstrations(tasks):
    messages = planning_messages("Caption cat.png", tasks, files=["/data/cat.png"], demonstrations=1)
    system = messages[0].content
    assert "- image-to-text(image*) -> text: Describe an image in words" in system  # table description, * = required, outputs
    assert "- echo(text*): Shout a text back." in system
    demos = [json.loads(m.content) for m in messages[1:-1] if isinstance(m, AIMessage)]
    assert demos and all(step["task"] in tasks for plan in demos for step in plan)
    assert demos[-1][0]["task"] == "image-to-text"  # the most similar demonstration comes last
    assert messages[-1].content == "Caption cat.png\n\nFiles provided by the user:\n- /data/cat.png"  # as every agent lists them
    chat = planning_messages("Thanks! Who are you?", tasks, demonstrations=1)
    assert [] in [json.loads(m.content) for m in chat[1:-1] if isinstance(m, AIMessage)]  # "no task needed"
    assert chat[0].content == messages[0].content  # the static part is the same for every request


def test_chat_history_is_trimmed_to_the_latest_turns(tasks):
    history = [("human", "old question " + "x" * 4000), ("ai", "old answer"),
               ("human", "Here is dog.png"), ("ai", "Nice dog.")]
    messages = planning_messages("Now describe it", tasks, chat_history=history, history_tokens=100)
    texts = [m.content for m in messages]
    assert texts[-3:] == ["Here is dog.png", "Nice dog.", "Now describe it"]
    assert not any(t.startswith("old question") for t in texts)


def _block(messages, turns: int = 0) -> list[str]:
    """The demonstrations' requests in a planning prompt: the turns after the system message, before the
    conversation's ``turns`` messages and the request."""
    return [m.content for m in messages[1:len(messages) - 1 - turns] if isinstance(m, HumanMessage)]


def test_the_block_is_chosen_by_the_inputs_the_request_gives_files_and_conversation_included():
    table = task_table()
    no_file = _block(planning_messages("What is in it?", table, wants=True))
    named = _block(planning_messages("What is in beach.png?", table, wants=True))
    assert named != no_file and any(".jpg" in d or ".png" in d for d in named)
    # a picture attached without a word about it, or one an earlier turn made, gives the same block
    attached = planning_messages("What is in it?", table, files=["IMG_0912.jpg"], wants=True)
    earlier = planning_messages("now animate it", table, wants=True,
                                chat_history=[("human", "draw a lighthouse"), ("ai", "Here: outputs/lighthouse.png")])
    assert _block(attached) == named
    assert _block(earlier, turns=2) == named and earlier[-3].content == "draw a lighthouse"  # then the conversation
    # a conversation without files keeps the block for requests without files
    chat = planning_messages("and in German?", table, wants=True,
                             chat_history=[("human", "write a haiku"), ("ai", "Quiet pond at dusk")])
    assert _block(chat, turns=2) == no_file


@pytest.mark.parametrize("answer", [
    "```json\n" + json.dumps(CAPTION) + "\n```",
    "Here is the plan: " + json.dumps(CAPTION) + " Hope it helps.",
    json.dumps(CAPTION).replace('"', "'"),
    json.dumps(CAPTION).replace("}]", "},]"),
    json.dumps({"tasks": CAPTION}),
])
def test_lenient_parsing(answer):
    data = parse_plan_text(answer)
    assert (data["tasks"] if isinstance(data, dict) else data) == CAPTION


def test_parse_without_json_raises():
    with pytest.raises(PlanError, match="no JSON plan found"):
        parse_plan_text("I would caption the image and read it aloud.")


async def test_valid_text_plan_needs_one_call(tasks):
    llm = script(CAPTION)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert result.plan.as_list()[1] == {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}
    assert len(llm.prompts) == 1 and result.repairs == [] and not result.structured
    assert result.usage == {"llm_calls": 1, "prompt_tokens": 10, "completion_tokens": 5}
    assert result.raw_outputs == [json.dumps(CAPTION)]


async def test_the_agent_shows_as_many_demonstrations_as_it_is_told(tools):
    """``GlobalPlanAgent(demonstrations=K)`` reaches the prompt: the block for the request's kinds of
    input, K example turns more, then the request."""
    from hugginggpt.agent import GlobalPlanAgent

    shown = {}
    for k in (0, 1, 2):
        llm = script(CAPTION)
        agent = GlobalPlanAgent(llm, tools=[tools["image-to-text"], tools["text-to-speech"]], demonstrations=k)
        result = await agent.aplan("Caption cat.png and read it aloud")
        shown[k] = sum(1 for m in result.prompt if m["role"] == "ai")
        assert result.prompt[-1]["content"] == "Caption cat.png and read it aloud"
    block = shown[0]
    assert block > 0 and shown == {0: block, 1: block + 1, 2: block + 2}


async def test_invalid_json_is_re_asked_once_with_the_error(tasks):
    llm = script("I will caption the image.", CAPTION)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert len(result.plan.tasks) == 2 and len(llm.prompts) == 2
    reask = llm.prompts[1]
    assert reask[-2].content == "I will caption the image."
    assert "no JSON plan found" in reask[-1].content and "corrected JSON array" in reask[-1].content
    assert result.repairs[0]["reason"].startswith("re-asked after: no JSON plan found")


async def test_rejected_task_is_re_asked_and_failure_twice_raises(tasks):
    bad = [{"task": "paint-a-picture", "id": 0, "dep": [-1], "args": {}}]
    llm = script(bad, CAPTION)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert "rejected: unknown task 'paint-a-picture'" in llm.prompts[1][-1].content
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]

    with pytest.raises(PlanError, match="planning failed twice"):
        await plan_with(script("no idea", "still no idea"), tasks, "Caption cat.png")


@pytest.mark.parametrize("request_text, files", [("How many cats are in cat.png?", None),
                                                  ("这张图片里有几只猫？", ["/data/cat.png"])])
async def test_an_empty_plan_for_a_request_that_gives_a_file_is_re_asked_once(tasks, request_text, files):
    llm = script([], CAPTION[:1])
    result = await plan_with(llm, tasks, request_text, files=files)
    assert len(llm.prompts) == 2 and "the plan is empty, but the request gives" in llm.prompts[1][-1].content
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]

    llm = script([], [])  # asked again, the model still sees no task: the empty plan stands
    assert (await plan_with(llm, tasks, request_text, files=files)).plan.tasks == []


async def test_an_empty_plan_for_a_request_that_gives_only_a_table_is_re_asked_once():
    table_tasks = {n: task_table()[n] for n in ("table-question-answering", "text-generation")}
    answer = [{"task": "table-question-answering", "id": 0, "args": {"table": "ventas.csv", "question": "¿qué mes?"}}]
    llm = script([], answer)
    result = await plan_with(llm, table_tasks, "¿Qué mes vendió más según ventas.csv?")
    assert len(llm.prompts) == 2 and "the request gives 'ventas.csv'" in llm.prompts[1][-1].content
    assert [t.task for t in result.plan.tasks] == ["table-question-answering"]


class _BoundedScript(ScriptedChatModel):
    """A scripted model with a ``max_tokens`` setting that records the bound of each call."""

    max_tokens: int | None = 100_000
    bounds: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.bounds.append(kwargs.get("max_tokens", self.max_tokens))
        return super()._generate(messages, stop, run_manager, **kwargs)


@pytest.mark.parametrize("structured", [False, True])
async def test_the_plan_call_is_bounded_by_what_a_plan_can_need(tasks, structured):
    from hugginggpt.agent.plan.planner import plan_max_tokens

    llm = _BoundedScript(responses=[AIMessage(json.dumps({"tasks": CAPTION}))], structured=structured, bounds=[])
    request = "Caption cat.png and read it aloud"
    await plan_with(llm, tasks, request, structured=structured)
    assert llm.bounds == [plan_max_tokens(request)] and llm.bounds[0] <= 1024
    assert plan_max_tokens("x" * 5000) > 5000  # a request's quoted text may be copied whole


@pytest.mark.parametrize("request_text", ["Thanks, that was helpful!", "你好，你是谁？"])
async def test_an_empty_plan_for_a_request_without_files_needs_one_call(tasks, request_text):
    llm = script([])
    result = await plan_with(llm, tasks, request_text)
    assert result.plan.tasks == [] and len(llm.prompts) == 1


async def test_structured_output_uses_the_plan_schema(tasks):
    llm = script({"tasks": CAPTION}, structured=True)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert result.structured and len(result.plan.tasks) == 2
    schema = llm.schemas[0]
    assert schema["required"] == ["tasks"]
    names = [branch["properties"]["task"]["enum"] for branch in schema["properties"]["tasks"]["items"]["anyOf"]]
    assert names == [["image-to-text"], ["text-to-speech"], ["echo"]]


def _cut(text: str) -> AIMessage:
    """An answer that the model's token limit cut off, as providers mark it."""
    return AIMessage(text, response_metadata={"finish_reason": "length"})


WRITTEN = json.dumps({"tasks": [{"step": "caption", "task": "image-to-text", "id": 1, "args": {"image": "cat.png"}},
                                {"step": "speak", "task": "text-to-speech", "id": 2, "args": {"text": "<resource>-1"}}]})


@pytest.mark.parametrize("structured", [False, True])
async def test_a_task_cut_off_by_the_token_limit_is_dropped_not_completed(tasks, structured, tmp_path):
    """The readers close a cut-off answer with ends of their own (``"args": ""``, half a file name);
    the unfinished task is dropped instead, the whole ones kept, and the repair says why. The trace
    says why the answer ended."""
    from hugginggpt.agent.trace import Trace

    text = WRITTEN[:-2] + ', {"step": "caption again", "task": "image-to-text", "id": 3, "args": {"image": "cat.p'
    llm = ScriptedChatModel(responses=[_cut(text)], structured=structured)
    trace = Trace(tmp_path / "trace.json")
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud", trace=trace)
    assert [call["finish_reason"] for call in trace.data["llm_calls"]] == ["length"]
    assert [(t.id, t.task, t.args) for t in result.plan.tasks] == [
        (1, "image-to-text", {"image": "cat.png"}), (2, "text-to-speech", {"text": "<resource>-1"})]
    assert len(llm.prompts) == 1
    assert result.repairs[0]["reason"] == "the planner's answer stopped at its token limit: its unfinished last task is dropped"


async def test_an_answer_cut_after_a_whole_task_keeps_it(tasks):
    llm = ScriptedChatModel(responses=[_cut(WRITTEN[:-2] + ",")])
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert result.repairs[0]["reason"] == "the planner's answer stopped at its token limit"


async def test_an_answer_cut_inside_its_first_task_is_re_asked(tasks):
    llm = ScriptedChatModel(responses=[_cut('{"tasks": [{"step": "caption", "task": "image-to-text", "id": 1, "args": {"ima'),
                                       AIMessage(WRITTEN)])
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert "stopped at its token limit before it finished one task" in llm.prompts[1][-1].content
    assert len(result.plan.tasks) == 2


def test_the_partial_json_parser_s_half_task_is_dropped_too():
    """LangChain's structured-output parser reads a cut-off answer with ``parse_partial_json``: the
    half-written task it returns is dropped all the same."""
    from langchain_core.output_parsers import JsonOutputParser

    text = WRITTEN[:-2] + ', {"step": "caption again", "task": "image-to-text", "id": 3, "args": {"image": "cat.p'
    partial = JsonOutputParser().parse(text)
    assert partial["tasks"][2]["args"] == {"image": "cat.p"}
    kept, dropped = without_unfinished_task(text, partial)
    assert dropped == 1 and kept["tasks"] == json.loads(WRITTEN)["tasks"]
    # a list written without the wrapper, and an answer that is not strict JSON: its last task goes
    kept, dropped = without_unfinished_task("[{'task': 'echo', 'id': 1, 'args': {'text': 'hi'}}, {'task': 'ec",
                                            [{"task": "echo", "id": 1, "args": {"text": "hi"}}, {"task": "ec"}])
    assert (kept, dropped) == ([{"task": "echo", "id": 1, "args": {"text": "hi"}}], 1)


@pytest.mark.parametrize(("metadata", "reason", "expected"), [
    ({"finish_reason": "length"}, "length", True), ({"stop_reason": "max_tokens"}, "max_tokens", True),
    ({"finish_reason": "stop"}, "stop", False), ({}, None, False)])
def test_cut_off_reads_how_providers_mark_the_token_limit(metadata, reason, expected):
    message = AIMessage("x", response_metadata=metadata)
    assert finish_reason(message) == reason and cut_off(message) is expected
    assert finish_reason(None) is None


def test_schema_of_table_tasks_comes_from_the_table():
    table = task_table()
    from langchain_core.tools import StructuredTool

    only_table = describe_tools([StructuredTool.from_function(lambda image: {}, name="image-to-text", description="x")], table)
    array = plan_schema(only_table)["properties"]["tasks"]
    branch = array["items"]["anyOf"][0]
    assert branch["properties"]["args"]["required"] == ["image"]
    assert branch["properties"]["task"]["enum"] == ["image-to-text"]


def test_every_demonstration_is_a_clean_plan_for_the_task_table():
    from hugginggpt.agent.plan.passes import validate_plan
    from hugginggpt.prompts import load_demonstrations

    table = dict(task_table())
    demos = load_demonstrations()
    assert {d["kind"] for d in demos} >= {"single", "chain", "dag", "none"}
    for demo in demos:
        assert validate_plan(demo["plan"], table)[1] == [], demo["input"]


def test_a_table_task_is_its_spec_and_another_tool_a_spec_from_its_schema():
    """The planner's task of the table is the table's own ``TaskSpec`` (arguments, their kinds and
    choices, outputs); a tool outside the table is a ``TaskSpec`` read from its argument schema."""
    from typing import Literal

    from langchain_core.tools import StructuredTool

    table = task_table()

    def shout(text: str, times: int = 1, input_image: str = "", tone: Literal["loud", "calm"] = "loud") -> dict:
        return {}

    specs = describe_tools([StructuredTool.from_function(lambda image: {}, name="image-segmentation", description="x"),
                            StructuredTool.from_function(shout, name="shout", description="y")], table)
    spec = table["image-segmentation"]
    assert specs["image-segmentation"] is spec and spec.in_table
    shout_spec = specs["shout"]
    assert not shout_spec.in_table and shout_spec.outputs == [] and shout_spec.description == "y"
    assert [(a.name, a.kind, a.required, a.choices) for a in shout_spec.args] == [
        ("text", "text", True, None), ("times", "number", False, None), ("input_image", "image", False, None),
        ("tone", "choice", False, ["loud", "calm"])]


async def test_a_re_ask_the_llm_fails_to_answer_leaves_the_first_answer_with_a_note(tasks):
    """A re-ask longer than the model's context (or any failed second call) does not lose the first plan's
    runnable tasks; with no usable first answer the failure is the LLM's error."""
    from hugginggpt.errors import LLMError

    partly = [CAPTION[0], {"task": "paint-a-picture", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]
    llm = script(partly)  # a second call fails: the script has one answer
    result = await plan_with(llm, tasks, "Caption cat.png")
    assert len(llm.prompts) == 2
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]
    note = result.repairs[-1]["reason"]
    assert note.startswith("re-asked after: rejected: unknown task 'paint-a-picture'")
    assert "the re-ask failed, so the first answer is used (planning-reask: the LLM call failed" in note

    with pytest.raises(LLMError, match="planning-reask"):
        await plan_with(script("no plan here"), tasks, "Caption cat.png")


async def test_the_second_ask_draws_afresh_from_a_model_that_samples(tasks):
    """A controller with a temperature and a seed is asked the first prompt again, at a higher temperature
    with the next seed (the same weights; ``llm/sampling.redrawn``): shown its failed answer and the error, a
    small model mostly gives up. Its first setting is left as it was for the next request."""
    from hugginggpt.llm.sampling import REDRAW_TEMPERATURE

    from .conftest import SamplingChatModel

    bad = json.dumps([CAPTION[0], {"task": "paint-a-picture", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}])
    good = json.dumps([CAPTION[0], {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}])
    llm = SamplingChatModel(responses=[AIMessage(bad), AIMessage(bad)], by_draw={(REDRAW_TEMPERATURE, 1): [good]})
    result = await plan_with(llm, tasks, "Caption cat.png and read the caption aloud")
    assert llm.draws == [(0.2, 0), (REDRAW_TEMPERATURE, 1)]
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    reason = result.repairs[0]["reason"]
    assert reason.startswith("re-asked after: rejected: unknown task 'paint-a-picture'") and "drawn afresh" in reason
    assert [m.content for m in llm.prompts[1]] == [m.content for m in llm.prompts[0]]  # the first prompt again
    assert (llm.temperature, llm.seed) == (0.2, 0)
    # the next request's first ask is the controller as configured again
    await plan_with(llm, tasks, "Caption cat.png")
    assert llm.draws[2] == (0.2, 0)


async def test_a_hosted_controller_is_asked_again_with_its_sampling_raised(tasks):
    """Over HTTP, as a user configures an OpenAI-compatible controller: the second planning call is the
    first's messages again, with temperature 0.8 and seed 1 in its body."""
    from hugginggpt.llm import load_llm
    from tests.openai_server import OpenAIServer

    bad = [{"step": "caption", "task": "image-to-text", "id": 0, "args": {"image": "cat.png"}},
           {"step": "paint", "task": "paint-a-picture", "id": 1, "args": {"text": "<resource>-0"}}]
    with OpenAIServer(plans={"Caption cat.png": bad}) as server:
        llm = load_llm("openai:stand-in", base_url=server.url, api_key="unused", temperature=0.2)
        result = await plan_with(llm, tasks, "Caption cat.png")
    first, second = [r for r in server.requests if r.get("response_format")]
    assert (first.get("temperature"), first.get("seed")) == (0.2, None)
    assert (second["temperature"], second["seed"]) == (0.8, 1) and second["messages"] == first["messages"]
    assert [t.task for t in result.plan.tasks] == ["image-to-text"]
    assert any("drawn afresh" in r["reason"] for r in result.repairs)


def test_a_redraw_never_cools_a_model_and_needs_a_temperature():
    from hugginggpt.llm.sampling import REDRAW_TEMPERATURE, redrawn

    from .conftest import SamplingChatModel

    hot = SamplingChatModel(responses=[], temperature=1.2, seed=7)
    assert (redrawn(hot).temperature, redrawn(hot).seed) == (1.2, 8)
    assert redrawn(SamplingChatModel(responses=[])).temperature == REDRAW_TEMPERATURE
    assert redrawn(script("x")) is None  # nothing to set: a second draw would be the first again


async def test_a_file_left_unread_is_re_asked_and_only_an_answer_that_reads_it_is_used(tasks):
    files = ["/data/cat.png", "/data/dog.png"]  # attached: not a list the user wrote (no listed-files pass)
    first = [{"task": "image-to-text", "id": 0, "args": {"image": "/data/cat.png"}}]
    both = [*first, {"task": "image-to-text", "id": 1, "args": {"image": "/data/dog.png"}}]
    llm = script(first, both)
    result = await plan_with(llm, tasks, "Caption these pictures", files=files)
    assert "the request gives '/data/dog.png', which no task reads" in llm.prompts[1][-1].content
    assert [t.args["image"] for t in result.plan.tasks] == files

    # the second answer still leaves dog.png unread (a re-roll, not a mend): the first answer stays
    still = [*first, {"task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}]
    result = await plan_with(script(first, still), tasks, "Caption these pictures", files=files)
    assert [(t.task, t.args) for t in result.plan.tasks] == [("image-to-text", {"image": "/data/cat.png"})]
    assert result.repairs[-1]["reason"].endswith("the second answer was not used (it does not mend what the re-ask named)")


async def test_a_step_written_twice_is_re_asked_and_the_answer_that_mends_it_is_used(tasks):
    caption = {"task": "image-to-text", "id": 0, "args": {"image": "cat.png"}}
    speak = {"task": "text-to-speech", "args": {"text": "<resource>-0"}}
    twice = [caption, {**speak, "id": 1}, {**speak, "id": 2}]
    llm = script(twice, CAPTION)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert "task 2 (text-to-speech) does what task 1 does, on the same arguments" in llm.prompts[1][-1].content
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert result.repairs[0]["reason"].startswith("re-asked after: task 2 (text-to-speech) does what task 1 does")

    # asked again, the model writes the step twice again: the first answer stays, with a note
    llm = script(twice, twice)
    result = await plan_with(llm, tasks, "Caption cat.png and read it aloud")
    assert len(llm.prompts) == 2 and len(result.plan.tasks) == 3
    assert result.repairs[-1]["reason"].endswith("the second answer was not used (it does not mend what the re-ask named)")


async def test_of_two_answers_that_each_lose_a_task_the_one_keeping_more_tasks_is_used():
    """Each answer has one step that cannot run (a text read from a picture, read by no other step), which
    validation takes out: the re-ask's answer is used when it keeps as many tasks as the first, and the first
    stays when the second keeps fewer."""
    draw = {"task": "text-to-image", "id": 0, "args": {"text": "a tiny house in a forest"}}
    first = [draw, {"task": "feature-extraction", "id": 1, "args": {"text": "<resource>-0"}},
             {"task": "image-text-to-image", "id": 2, "args": {"image": "<resource>-0", "prompt": "winter"}}]
    second = [draw, {"task": "depth-estimation", "id": 1, "args": {"image": "<resource>-0"}},
              {"task": "depth-text-to-image", "id": 2, "args": {"image": "<resource>-1", "text": "a winter house"}},
              {"task": "text-to-audio", "id": 3, "args": {"text": "<resource>-2"}}]
    request = "Make a picture of a tiny house in a forest, estimate its depth, and draw a winter version along it"
    tasks = task_table()
    result = await plan_with(script(first, second), tasks, request)
    assert [t.task for t in result.plan.tasks] == ["text-to-image", "depth-estimation", "depth-text-to-image"]
    assert result.repairs[0]["reason"].startswith("re-asked after: rejected: task 1 (feature-extraction)")

    shorter = [draw, {"task": "text-to-audio", "id": 1, "args": {"text": "<resource>-0"}}]
    result = await plan_with(script(first, shorter), tasks, request)
    assert [t.task for t in result.plan.tasks] == ["text-to-image", "image-text-to-image"]
    assert result.repairs[-1]["reason"].endswith(
        "the second answer was not used (it keeps fewer tasks and loses some to rejections too)")
