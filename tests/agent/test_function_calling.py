"""FunctionCallingAgent driven by a scripted tool-calling chat model and real StructuredTools."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from PIL import Image
from pydantic import Field

from hugginggpt.agent.function_calling import FunctionCallingAgent
from hugginggpt.errors import LLMError, TaskError
from hugginggpt.tools import build_tools

from .conftest import PictureExecutor, ReplayModel


class ScriptedToolModel(ReplayModel):
    """Replays scripted AI messages (with tool calls) and remembers the tools it was bound to."""

    bound_tools: list[Any] = Field(default_factory=list)
    tool_choice: Any = None

    def bind_tools(self, tools, **kwargs):
        self.bound_tools = list(tools)
        self.tool_choice = kwargs.get("tool_choice")
        return self


def call(name: str, call_id: str, **args: Any) -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


class Toolbox:
    """Real tools that use the run's workspace, recording when each call ran."""

    def __init__(self):
        self.spans: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def _span(self, name: str, start: float) -> None:
        with self.lock:
            self.spans.append((name, start, time.perf_counter()))

    def tools(self) -> list[StructuredTool]:
        def caption(image: str, config: RunnableConfig) -> dict:
            """Describe an image in one sentence."""
            start = time.perf_counter()
            path = config["configurable"]["workspace"].resolve(image, "image")
            with Image.open(path) as img:
                color = "red" if img.getpixel((0, 0))[0] > 128 else "dark"
            self._span("image-to-text", start)
            return {"text": f"a {color} square picture of a cat"}

        def speak(text: str, config: RunnableConfig) -> dict:
            """Read a text aloud into a WAV file."""
            start = time.perf_counter()
            path = config["configurable"]["workspace"].new_path("audio")
            sf.write(path, np.zeros(1600 + 10 * len(text), dtype="float32"), 16000)
            self._span("text-to-speech", start)
            return {"audio": str(path)}

        def nap(label: str) -> dict:
            """Wait a moment (stands in for a slow model)."""
            start = time.perf_counter()
            time.sleep(0.4)
            self._span(f"nap-{label}", start)
            return {"text": f"rested {label}"}

        def broken(text: str) -> dict:
            """A task whose model is missing."""
            raise TaskError("text-classification", "model not available")

        return [
            StructuredTool.from_function(caption, name="image-to-text"),
            StructuredTool.from_function(speak, name="text-to-speech"),
            StructuredTool.from_function(nap, name="nap"),
            StructuredTool.from_function(broken, name="text-classification"),
        ]


@pytest.fixture
def toolbox() -> Toolbox:
    return Toolbox()


def make_agent(responses, toolbox, tmp_path, **limits):
    model = ScriptedToolModel(responses=responses)
    agent = FunctionCallingAgent(model, toolbox.tools(), workspace_root=tmp_path / "runs", **limits)
    return agent, model


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_multi_step_request_records_calls_plan_and_trace(image, toolbox, tmp_path):
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]),
        AIMessage("", tool_calls=[call("text-to-speech", "c2", text="a red square picture of a cat")]),
        AIMessage("The picture shows a red square cat; I read it aloud."),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke({"input": "Describe this image and read it aloud", "chat_history": [], "files": [str(image)]})

    assert out["output"] == "The picture shows a red square cat; I read it aloud."
    assert [n["task"] for n in out["plan"]] == ["image-to-text", "text-to-speech"]
    assert out["plan"][0] == {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": str(image)}}
    assert out["plan"][1] == {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}
    assert out["selections"] == {}
    assert out["results"][0]["status"] == "ok"
    assert out["results"][0]["result"] == {"text": "a red square picture of a cat"}
    wav = Path(out["results"][1]["result"]["audio"])
    assert wav.is_file() and sf.info(wav).samplerate == 16000
    # the tools saw the run's workspace: the WAV lies in the run folder, next to the trace
    trace_path = Path(out["trace"])
    assert wav.is_relative_to(trace_path.parent)
    assert trace_path.parent.parent == tmp_path / "runs"

    # the model got the tools through bind_tools (a call required in every turn, final_answer to end)
    # and each observation as a ToolMessage
    assert [t.name for t in model.bound_tools] == ["image-to-text", "text-to-speech", "nap", "text-classification",
                                                   "final_answer"]
    assert model.tool_choice == "any"
    assert len(model.received) == 3
    first_obs = tool_messages(model.received[1])
    assert json.loads(first_obs[0].content) == {"text": "a red square picture of a cat"}
    assert str(image) in model.received[0][-1].content  # the user's files are listed to the model

    trace = json.loads(trace_path.read_text())
    assert trace["agent"] == "function-calling"
    assert trace["plan"] == out["plan"]
    assert trace["usage"]["llm_calls"] == 3 and trace["usage"]["steps"] == 2
    assert len(trace["llm_calls"]) == 3
    names = [e["event"] for e in trace["events"]]
    assert names == ["llm_step", "task_start", "task_end", "llm_step", "task_start", "task_end", "llm_step", "response"]
    assert trace["stopped"] is None


def test_the_run_ends_with_the_final_answer_call(image, toolbox, tmp_path):
    """The model ends by calling final_answer: its answer is the output, no task runs for it, and
    it is not a step of the plan."""
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]),
        AIMessage("", tool_calls=[call("final_answer", "c2", answer="It is a red square picture of a cat.")]),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke({"input": "Describe this image", "files": [str(image)]})

    assert out["output"] == "It is a red square picture of a cat."
    assert [n["task"] for n in out["plan"]] == ["image-to-text"]
    assert [name for name, _, _ in toolbox.spans] == ["image-to-text"]
    assert len(model.received) == 2
    trace = json.loads(Path(out["trace"]).read_text())
    assert trace["usage"]["llm_calls"] == 2 and trace["usage"]["steps"] == 1


def test_parallel_calls_of_one_turn_run_concurrently(toolbox, tmp_path):
    responses = [
        AIMessage("", tool_calls=[call("nap", "a", label="one"), call("nap", "b", label="two")]),
        AIMessage("Both rested."),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke("rest twice")

    spans = {name: (start, end) for name, start, end in toolbox.spans}
    (s1, e1), (s2, e2) = spans["nap-one"], spans["nap-two"]
    assert s1 < e2 and s2 < e1, "the two calls of one turn should overlap in time"
    assert [n["dep"] for n in out["plan"]] == [[], []]
    assert {o.content for o in tool_messages(model.received[1])} == {'{"text": "rested one"}', '{"text": "rested two"}'}


def test_stream_yields_stage_events_then_final(image, toolbox, tmp_path):
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]),
        AIMessage("A red cat."),
    ]
    agent, _ = make_agent(responses, toolbox, tmp_path)

    events = list(agent.stream_stage_events({"input": "caption it", "files": [str(image)]}))

    assert [e["event"] for e in events] == ["llm_step", "task_start", "task_end", "llm_step", "response", "final"]
    assert events[0]["tool_calls"] == [{"name": "image-to-text", "args": {"image": str(image)}}]
    assert events[-1]["output"]["output"] == "A red cat."
    assert Path(events[-1]["output"]["trace"]).is_file()


def test_an_empty_final_answer_is_replaced_by_what_the_tools_produced(image, toolbox, tmp_path):
    """A model that ends with an empty message leaves the user an account of the results, not nothing
    (as the global-plan agent's response stage does); the trace keeps it as ``response_fallback``."""
    responses = [AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]), AIMessage("")]
    agent, _ = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke({"input": "caption it", "files": [str(image)]})

    assert out["output"].startswith("The model gave no answer; here is what the tasks produced:")
    assert "image-to-text" in out["output"] and "a red square picture of a cat" in out["output"]
    assert json.loads(Path(out["trace"]).read_text())["response_fallback"] == out["output"]


def test_tool_error_becomes_an_observation(toolbox, tmp_path):
    responses = [
        AIMessage("", tool_calls=[call("text-classification", "c1", text="great movie")]),
        AIMessage("", tool_calls=[call("image-to-text", "c2", image="/etc/passwd")]),
        AIMessage("I could not classify the text."),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke("classify 'great movie'")

    assert out["output"] == "I could not classify the text."
    assert out["results"][0]["status"] == "failed"
    assert "model not available" in out["results"][0]["error"]
    assert out["results"][1]["status"] == "failed"
    assert "escapes the allowed folders" in out["results"][1]["error"]
    observations = tool_messages(model.received[2])
    assert observations[0].status == "error" and "model not available" in observations[0].content
    assert "escapes the allowed folders" in observations[1].content


def test_bad_arguments_are_reported_to_the_model(toolbox, tmp_path):
    responses = [
        AIMessage("", tool_calls=[call("nap", "c1", lable="typo")]),
        AIMessage("gave up"),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke("rest")

    assert out["results"][0]["status"] == "failed"
    observation = tool_messages(model.received[1])[0]
    assert observation.status == "error" and "label" in observation.content


def test_step_limit_stops_with_what_was_done(toolbox, tmp_path):
    responses = [AIMessage("", tool_calls=[call("nap", f"c{i}", label=str(i))]) for i in range(4)]
    agent, model = make_agent(responses, toolbox, tmp_path, max_steps=2)

    out = agent.invoke("rest a lot")

    assert out["output"].startswith("stopped: reached the limit of 2 steps.")
    assert "0. nap -> " in out["output"] and "1. nap -> " in out["output"]
    assert [n["args"]["label"] for n in out["plan"]] == ["0", "1"]
    assert len(model.received) == 3  # the third turn asked for a call that was refused
    assert json.loads(Path(out["trace"]).read_text())["stopped"] == "reached the limit of 2 steps"


def test_llm_call_limit(toolbox, tmp_path):
    responses = [AIMessage("", tool_calls=[call("nap", f"c{i}", label=str(i))]) for i in range(5)]
    agent, model = make_agent(responses, toolbox, tmp_path, max_llm_calls=2)

    out = agent.invoke("rest a lot")

    assert out["output"].startswith("stopped: reached the limit of 2 LLM calls.")
    assert len(model.received) == 2
    assert len(out["plan"]) == 2


def test_time_budget(toolbox, tmp_path):
    responses = [AIMessage("", tool_calls=[call("nap", f"c{i}", label=str(i))]) for i in range(5)]
    agent, model = make_agent(responses, toolbox, tmp_path, time_budget_s=0.5)

    out = agent.invoke("rest a lot")

    assert out["output"].startswith("stopped: ran out of the time budget of 0.5 s.")
    assert 1 <= len(out["plan"]) <= 2


def test_repeated_identical_calls_are_answered_from_the_first_and_then_stopped(image, toolbox, tmp_path):
    same = {"image": str(image)}
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", **same)]),
        AIMessage("", tool_calls=[call("image-to-text", "c2", **same)]),
        AIMessage("", tool_calls=[call("image-to-text", "c3", **same)]),
        AIMessage("unreachable"),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path, max_repeats=2)

    out = agent.invoke({"input": "caption", "files": [str(image)]})

    assert len([s for s in toolbox.spans if s[0] == "image-to-text"]) == 1  # ran once
    assert len(out["plan"]) == 1
    repeat_obs = tool_messages(model.received[2])[-1]
    assert "a red square picture of a cat" in repeat_obs.content and "same call as step 0" in repeat_obs.content
    assert out["output"].startswith("stopped: repeated the same image-to-text call 2 times")
    assert len(model.received) == 3


def test_an_identical_parallel_call_waits_for_the_first_instead_of_running_again(image, toolbox, tmp_path):
    same = {"image": str(image)}
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", **same), call("image-to-text", "c2", **same)]),
        AIMessage("A cat."),
    ]
    agent, model = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke({"input": "caption", "files": [str(image)]})

    assert len([s for s in toolbox.spans if s[0] == "image-to-text"]) == 1  # ran once
    assert len(out["plan"]) == 1
    first, second = tool_messages(model.received[1])[-2:]
    assert "a red square picture of a cat" in first.content and "same call as step 0" not in first.content
    assert "a red square picture of a cat" in second.content and "same call as step 0" in second.content
    assert out["output"].startswith("A cat.")


def test_llm_failure_is_a_typed_error_and_the_trace_is_still_written(toolbox, tmp_path):
    class Unreachable(ScriptedToolModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            raise ConnectionError("connection refused")

    agent = FunctionCallingAgent(Unreachable(responses=[AIMessage("x")]), toolbox.tools(),
                                 workspace_root=tmp_path / "runs")
    with pytest.raises(LLMError, match="connection refused"):
        agent.invoke("hello")
    (trace_file,) = (tmp_path / "runs").glob("*/trace.json")
    assert "connection refused" in json.loads(trace_file.read_text())["error"]


def test_chat_history_reaches_the_model(toolbox, tmp_path):
    agent, model = make_agent([AIMessage("It was a cat.")], toolbox, tmp_path)

    out = agent.invoke({"input": "what was it?", "chat_history": [("human", "look at my cat"), ("ai", "nice cat")]})

    assert out["output"] == "It was a cat." and out["plan"] == []
    contents = [m.content for m in model.received[0]]
    assert contents[1:] == ["look at my cat", "nice cat", "what was it?"]


def test_with_the_project_tools_and_resource_references(image, tmp_path):
    tools = build_tools(["image-to-text", "text-to-speech"], executor=PictureExecutor())
    responses = [
        AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]),
        AIMessage("", tool_calls=[call("text-to-speech", "c2", text="<resource>-0"),
                                  call("text-to-speech", "c3", txt="typo")]),
        AIMessage("Done."),
    ]
    model = ScriptedToolModel(responses=responses)
    agent = FunctionCallingAgent(model, tools, workspace_root=tmp_path / "runs")

    out = agent.invoke({"input": "caption and speak", "files": [str(image)]})

    assert out["plan"][1] == {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}
    audio = Path(out["results"][1]["result"]["audio"])
    assert sf.info(audio).frames == 800 * len("a 8x8 red picture")
    assert out["results"][2]["status"] == "failed" and "text" in out["results"][2]["error"]
    schema_names = [t.name for t in model.bound_tools]
    assert schema_names == ["image-to-text", "text-to-speech", "final_answer"]


def test_parallel_calls_are_numbered_in_the_models_order(toolbox, tmp_path):
    labels = [str(i) for i in range(6)]
    responses = [AIMessage("", tool_calls=[call("nap", f"c{i}", label=label) for i, label in enumerate(labels)]),
                 AIMessage("done")]
    agent, _ = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke("rest")

    assert [(n["id"], n["args"]["label"]) for n in out["plan"]] == list(enumerate(labels))


def test_a_repeated_call_shows_what_the_first_call_showed(tmp_path):
    """The model sees a tool's text (its summary), not the result envelope, on a repeat too."""
    def caption(image: str) -> tuple[str, dict]:
        """Describe an image in one sentence."""
        return "text: a cat", {"text": "a cat", "data": [{"label": "cat", "score": 0.9}]}

    tool = StructuredTool.from_function(caption, name="image-to-text", response_format="content_and_artifact")
    same = {"image": "cat.png"}
    responses = [AIMessage("", tool_calls=[call("image-to-text", f"c{i}", **same)]) for i in range(2)]
    model = ScriptedToolModel(responses=[*responses, AIMessage("A cat.")])
    agent = FunctionCallingAgent(model, [tool], workspace_root=tmp_path / "runs", max_repeats=3)

    out = agent.invoke("caption cat.png")

    first, repeat = (tool_messages(model.received[i])[-1].content for i in (1, 2))
    assert first == "text: a cat"
    assert repeat.startswith("text: a cat\n(Note: this is the same call as step 0")
    assert out["results"][0]["result"]["data"] == [{"label": "cat", "score": 0.9}]  # the envelope stays whole


def test_the_answer_is_checked_for_invented_numbers(image, toolbox, tmp_path):
    responses = [AIMessage("", tool_calls=[call("image-to-text", "c1", image=str(image))]),
                 AIMessage("A red square picture of a cat (confidence 0.97).")]
    agent, _ = make_agent(responses, toolbox, tmp_path)

    out = agent.invoke({"input": "caption it", "files": [str(image)]})

    assert out["output"].endswith("Note: 0.97 is not a result of any task.")
    assert json.loads(Path(out["trace"]).read_text())["invented_numbers"] == ["0.97"]
