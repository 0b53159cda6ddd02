"""GlobalPlanAgent end to end with a scripted LLM and deterministic tools."""

import json
from pathlib import Path

import pytest
import soundfile as sf
from langchain_core.runnables import Runnable

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.errors import PlanError

from .conftest import CallLog, Card, catalog_of, script

PLAN = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "IMAGE"}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "inputs" / "cat.png"
    path.parent.mkdir()
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    return path


def caption_plan(image):
    return json.loads(json.dumps(PLAN).replace("IMAGE", str(image)))


def make_agent(llm, tools, tmp_path, names=("image-to-text", "text-to-speech"), **kwargs):
    catalog = kwargs.pop("catalog", catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)]))
    return GlobalPlanAgent(llm, [tools[n] for n in names], catalog, workspace_root=tmp_path / "runs", **kwargs)


async def test_plan_runs_and_answer_names_real_files(tools, recorder, tmp_path, image):
    llm = script(caption_plan(image), "It shows a cat. I captioned it and read it aloud.")
    agent = make_agent(llm, tools, tmp_path)
    assert isinstance(agent, Runnable)
    out = await agent.ainvoke({"input": "What is in cat.png? Say it.", "files": [str(image)]})

    assert out["plan"][1] == {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}
    assert out["selections"] == {0: {"model": "org/cap", "reason": "the only candidate for this task"},
                                 1: {"model": "org/tts", "reason": "the only candidate for this task"}}
    assert out["results"][0] == {"task": "image-to-text", "status": "ok", "result": {"text": "a photo of a cat"}, "error": None}
    wav = Path(out["results"][1]["result"]["audio"])
    assert wav.is_file() and sf.info(str(wav)).samplerate == 16000
    assert recorder.calls[1]["args"] == {"text": "a photo of a cat"} and recorder.calls[1]["model"] == "org/tts"
    assert out["output"] == "It shows a cat. I captioned it and read it aloud."
    response_prompt = llm.prompts[-1][-1].content
    assert "prediction: text: a photo of a cat" in response_prompt and str(wav) in response_prompt
    assert Path(out["trace"]).parent == wav.parent.parent  # the run's workspace


async def test_trace_file_records_the_run(tools, tmp_path, image):
    llm = script(caption_plan(image), "Done.")
    out = await make_agent(llm, tools, tmp_path).ainvoke({"input": "Say what cat.png shows", "files": [str(image)]})
    trace = json.loads(Path(out["trace"]).read_text())
    assert trace["input"] == "Say what cat.png shows" and trace["files"] == [str(image)]
    assert trace["plan"] == out["plan"] and trace["repairs"] == []
    assert trace["raw_plan_outputs"] == [json.dumps(caption_plan(image))]
    assert [c["stage"] for c in trace["llm_calls"]] == ["planning", "response"]
    assert trace["llm_calls"][0]["prompt"][0]["type"] == "system"
    assert trace["results"]["1"]["status"] == "ok" and trace["selections"]["0"]["model"] == "org/cap"
    assert trace["usage"] == {"llm_calls": 2, "prompt_tokens": 20, "completion_tokens": 10}
    assert set(trace["timings"]) == {"plan", "selection", "execution", "response"}
    assert [e["event"] for e in trace["events"]][:2] == ["plan", "selection"]


async def test_stream_events_in_order(tools, tmp_path, image):
    agent = make_agent(script(caption_plan(image), "Done."), tools, tmp_path)
    events = [e async for e in agent.astream_stage_events({"input": "Caption it and read it aloud", "files": [str(image)]})]
    assert [(e["event"], e.get("id")) for e in events] == [
        ("plan", None), ("selection", None), ("task_start", 0), ("task_end", 0),
        ("task_start", 1), ("task_end", 1), ("response_delta", None), ("response", None), ("final", None)]
    assert events[6]["text"] == "Done." and events[7]["output"] == "Done."
    assert events[-1]["output"]["output"] == "Done."
    assert events[2]["args"] == {"image": str(image)} and events[4]["args"] == {"text": "a photo of a cat"}


def test_sync_stream_invoke_and_batch(tools, tmp_path, image):
    agent = make_agent(script(caption_plan(image), "Done."), tools, tmp_path)
    names = [e["event"] for e in agent.stream_stage_events({"input": "x", "files": [str(image)]})]
    assert names[0] == "plan" and names[-1] == "final"
    echo = make_agent(script([{"task": "echo", "id": 0, "args": {"text": "hi"}}], "HI"), tools, tmp_path, names=["echo"])
    assert echo.invoke("shout hi")["results"][0]["result"] == {"text": "HI"}
    chat = make_agent(script([], "Hello!", [], "Bye!"), tools, tmp_path)
    assert [o["output"] for o in chat.batch(["hello", "bye"], {"max_concurrency": 1})] == ["Hello!", "Bye!"]


async def test_callbacks_see_llm_and_tool_calls_under_the_agent_run(tools, tmp_path, image):
    log = CallLog()
    agent = make_agent(script(caption_plan(image), "Done."), tools, tmp_path)
    await agent.ainvoke({"input": "Caption it and read it aloud", "files": [str(image)]}, {"callbacks": [log]})
    kinds = [k for k, _ in log.events]
    assert kinds.count("llm") == 2
    assert ("tool", "image-to-text") in log.events and ("tool", "text-to-speech") in log.events
    root = [run for run, parent in log.parents.items() if parent is None]
    assert len(root) == 1  # everything hangs under the agent's own chain run
    assert log.events[0] == ("chain", "GlobalPlanAgent")


async def test_failed_task_reported_and_invented_paths_corrected(tools, tmp_path, image):
    plan = [{"task": "object-detection", "id": 0, "args": {"image": str(image)}},
            {"task": "image-to-text", "id": 1, "args": {"image": "<resource>-0"}},
            {"task": "echo", "id": 2, "args": {"text": "still here"}}]
    answer = "I found two cats, see /tmp/boxes.png and " + str(image)
    agent = make_agent(script(plan, answer), tools, tmp_path, names=["object-detection", "image-to-text", "echo"])
    out = await agent.ainvoke({"input": "find cats", "files": [str(image)]})
    assert [out["results"][i]["status"] for i in (0, 1, 2)] == ["failed", "skipped", "ok"]
    assert out["output"].startswith(answer)
    assert "Note: /tmp/boxes.png was not produced by any task" in out["output"]
    # failures are written from the outcomes, not by the LLM, which sees only what succeeded
    prompt = agent.llm.prompts[-1][-1].content
    assert "still here" in prompt and "object-detection" not in prompt and "Task 1" not in prompt
    report = out["output"].split("Not done:\n", 1)[1]
    assert report.startswith("- Task 0 (object-detection) failed: object-detection: cannot read")
    assert "- Task 1 (image-to-text) was skipped: it needs the output of task 0 (object-detection)" in report


async def test_no_llm_is_asked_to_answer_when_no_task_succeeded(tools, tmp_path, image):
    plan = [{"task": "object-detection", "id": 0, "args": {"image": str(image)}},
            {"task": "image-to-text", "id": 1, "args": {"image": "<resource>-0"}}]
    llm = script(plan)  # a response call would fail: the script has no answer left
    agent = make_agent(llm, tools, tmp_path, names=["object-detection", "image-to-text"])
    out = await agent.ainvoke({"input": "find cats", "files": [str(image)]})
    assert len(llm.prompts) == 1  # the planning call only
    assert out["output"].startswith("I could not complete the request: no task produced a result.")
    assert "object-detection" in out["output"] and "skipped" in out["output"]
    trace = json.loads(Path(out["trace"]).read_text(encoding="utf-8"))
    assert [c["stage"] for c in trace["llm_calls"]] == ["planning"]
    assert trace["response_llm"].startswith("skipped")


async def test_empty_plan_answers_directly_with_history(tools, tmp_path):
    llm = script([], "You said your name is Ada.")
    history = [("human", "My name is Ada."), ("ai", "Hello Ada!")]
    out = await make_agent(llm, tools, tmp_path).ainvoke({"input": "What is my name?", "chat_history": history})
    assert out["plan"] == [] and out["results"] == {} and out["selections"] == {}
    assert out["output"] == "You said your name is Ada."
    planning_texts = [m.content for m in llm.prompts[0]]
    assert planning_texts[-3:] == ["My name is Ada.", "Hello Ada!", "What is my name?"]
    assert [m.content for m in llm.prompts[1]] == ["My name is Ada.", "Hello Ada!", "What is my name?"]


async def test_failed_planning_still_writes_the_trace(tools, tmp_path):
    agent = make_agent(script("no plan", "still none"), tools, tmp_path)
    with pytest.raises(PlanError, match="planning failed twice"):
        await agent.ainvoke("do something")
    traces = list((tmp_path / "runs").glob("*/trace.json"))
    assert len(traces) == 1
    trace = json.loads(traces[0].read_text())
    assert trace["error"].startswith("PlanError: planning failed twice")
    assert [c["output"] for c in trace["llm_calls"]] == ["no plan", "still none"]


async def test_plan_only_and_execute_false(tools, tmp_path, image, recorder):
    agent = make_agent(script(caption_plan(image)), tools, tmp_path)
    result = await agent.aplan("Caption cat.png and read it aloud")
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert result.usage["llm_calls"] == 1
    sync = make_agent(script(caption_plan(image)), tools, tmp_path).plan("Caption cat.png and read it aloud")
    assert sync.plan == result.plan

    dry = make_agent(script(caption_plan(image)), tools, tmp_path, execute=False)
    out = await dry.ainvoke("Caption cat.png and read it aloud")
    assert out["results"] == {} and len(out["plan"]) == 2 and recorder.calls == []


async def test_with_the_real_tool_factory(tmp_path):
    """Table tools from ``build_tools``: arguments validated, media resolved in the run's workspace."""
    from hugginggpt.tools.factory import build_tools
    from tests.tools.conftest import ToyExecutor

    executor = ToyExecutor()
    tools = build_tools(["text-to-image", "image-classification", "text-to-speech"], executor=executor)
    plan = [{"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a blue square"}},
            {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}},
            {"task": "text-to-speech", "id": 2, "dep": [1], "args": {"text": "The colour is <resource>-1."}}]
    catalog = catalog_of([Card("toy/painter", "text-to-image", 1)])
    agent = GlobalPlanAgent(script(plan, "It is blue."), tools, catalog, workspace_root=tmp_path / "runs")
    out = await agent.ainvoke("Paint a blue square, tell me its colour out loud")
    assert [r["status"] for r in out["results"].values()] == ["ok", "ok", "ok"]
    assert out["results"][1]["result"]["text"] == "blue"
    assert executor.calls[2].args["text"] == "The colour is blue."
    assert executor.calls[0].model == "toy/painter" and executor.calls[1].model is None
    image = Path(out["results"][0]["result"]["image"])
    assert image.parent.parent == Path(out["trace"]).parent and image.is_file()


async def test_stopping_the_stream_cancels_the_run_and_writes_the_trace(tools, tmp_path, recorder):
    plan = [{"task": "sleep", "id": 0, "args": {"seconds": 30}}]
    agent = make_agent(script(plan, "never"), tools, tmp_path, names=["sleep"])
    stream = agent.astream_stage_events("wait a long time")
    async for event in stream:
        if event["event"] == "task_start":
            break
    await stream.aclose()
    trace = json.loads(next((tmp_path / "runs").glob("*/trace.json")).read_text())
    assert trace["error"].startswith("CancelledError")
    assert trace["plan"][0]["task"] == "sleep"
    assert [e["event"] for e in trace["events"]] == ["plan", "selection", "task_start"]
    assert recorder.calls == []  # the sleep never finished


async def test_defaults_plan_against_the_whole_task_table():
    from hugginggpt.tools import task_table

    plan = [{"task": "image-classification", "id": 0, "dep": [-1], "args": {"image": "dog.jpg"}}]
    agent = GlobalPlanAgent(script(plan))
    assert set(agent.task_specs) == set(task_table())
    assert agent.catalog.candidates("image-classification", k=3)  # the shipped catalog
    result = await agent.aplan("What is in dog.jpg?")
    assert result.plan.as_list() == [{"task": "image-classification", "id": 0, "dep": [], "args": {"image": "dog.jpg"}}]


async def test_missing_input_file_is_a_clear_error(tools, tmp_path):
    from hugginggpt.errors import ResourceError

    agent = make_agent(script(), tools, tmp_path)
    with pytest.raises(ResourceError, match="nope.png"):
        await agent.ainvoke({"input": "look", "files": [str(tmp_path / "nope.png")]})


def test_warm_up_has_a_controller_that_keeps_prompt_states_read_the_planning_prompt(tools, tmp_path):
    from langchain_core.messages import HumanMessage

    from hugginggpt.agent.plan.prompt import planning_messages

    from .conftest import ScriptedChatModel

    class Prefilling(ScriptedChatModel):
        read: list = []

        def prefill(self, messages):
            self.read.append(list(messages))
            return 2345

    llm = Prefilling(responses=[], read=[])
    agent = make_agent(llm, tools, tmp_path)
    assert agent.warm_up() == 2345
    (messages,) = llm.read
    # the static part the planning prompt of a request without files starts with (the rules, the tasks,
    # that block of demonstrations), and an empty request after it
    asked = planning_messages("Write a poem about the sea.", agent.task_specs, demonstrations=agent.demonstrations,
                              wants=agent.planner.wants)
    assert len(asked) > 2 and messages[:-1] == asked[:-1] and messages[-1] == HumanMessage("")
    assert make_agent(script(), tools, tmp_path).warm_up() == 0  # a controller that keeps no prompt state


def test_the_answer_streams_as_the_controller_writes_it(tools, tmp_path, image):
    """Issue 26: the response stage's tokens reach ``stream()`` as output pieces, which add up to the
    answer ``invoke`` gives (here a model that streams word by word)."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    answer = "It shows a cat, and I read the caption aloud."
    llm = GenericFakeChatModel(messages=iter([AIMessage(json.dumps(caption_plan(image))), AIMessage(answer)]))
    pieces = list(make_agent(llm, tools, tmp_path).stream({"input": "Caption it and read it aloud",
                                                           "files": [str(image)]}))
    outputs = [p["output"] for p in pieces if "output" in p]
    assert len([o for o in outputs if o]) >= 5  # word by word, not one chunk
    assert "".join(outputs) == answer
    assert "results" in pieces[next(i for i, p in enumerate(pieces) if "output" in p) - 1]  # results come first
    trace = json.loads(Path(next(p["trace"] for p in pieces if "trace" in p)).read_text())
    assert trace["output"] == answer
