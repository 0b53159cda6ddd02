"""ReActAgent driven by a scripted text chat model and real StructuredTools."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.agent.react import (
    ReActAgent,
    ReActParseError,
    parse_action_input,
    parse_step,
)
from hugginggpt.errors import TaskError
from hugginggpt.tools import build_tools

from .conftest import PictureExecutor, ReplayModel


class ScriptedTextModel(ReplayModel):
    """Replays scripted ReAct turns, cut at the stop sequence as a real model would be."""

    stops: list[Any] = Field(default_factory=list)

    def before_reply(self, stop: list[str] | None) -> None:
        self.stops.append(stop)
        text = self.responses[self.i].content
        for sequence in stop or []:
            text = text.split(sequence)[0]
        self.responses[self.i] = AIMessage(text)


class SpeechArgs(BaseModel):
    text: str = Field(description="The text to read aloud.")
    speed: float = Field(1.0, description="Speaking rate.")


def make_tools(ran: list[str]) -> list[StructuredTool]:
    def caption(image: str, config: RunnableConfig) -> dict:
        """Describe an image in one sentence."""
        config["configurable"]["workspace"].resolve(image, "image")
        ran.append("image-to-text")
        return {"text": "a red square picture of a cat"}

    def speak(text: str, speed: float = 1.0, *, config: RunnableConfig) -> dict:
        """Read a text aloud into a WAV file."""
        path = config["configurable"]["workspace"].new_path("audio")
        sf.write(path, np.zeros(1600, dtype="float32"), 16000)
        ran.append("text-to-speech")
        return {"audio": str(path)}

    def nap(seconds: float) -> str:
        """Wait a moment (stands in for a slow model)."""
        time.sleep(seconds)
        ran.append("nap")
        return f"rested {seconds}"

    def broken(text: str) -> dict:
        """A task whose model is missing."""
        raise TaskError("text-classification", "model not available")

    return [
        StructuredTool.from_function(caption, name="image-to-text"),
        StructuredTool.from_function(speak, name="text-to-speech", args_schema=SpeechArgs),
        StructuredTool.from_function(nap, name="nap"),
        StructuredTool.from_function(broken, name="text-classification"),
    ]


def make_agent(turns: list[str], tmp_path, ran=None, **limits):
    ran = [] if ran is None else ran
    model = ScriptedTextModel(responses=[AIMessage(t) for t in turns])
    return ReActAgent(model, make_tools(ran), workspace_root=tmp_path / "runs", **limits), model


def observations(messages: list[BaseMessage]) -> list[str]:
    return [m.content for m in messages if isinstance(m, HumanMessage) and m.content.startswith("Observation:")]


def test_multi_step_request(image, tmp_path):
    ran: list[str] = []
    turns = [
        f'Thought: I need a caption.\nAction: image-to-text\nAction Input: {{"image": "{image}"}}\n'
        "Observation: a dog (invented by the model)",
        "Thought: Now read it.\nAction: text-to-speech\nAction Input: ```json\n"
        '{"text": "a red square picture of a cat",}\n```',
        "Thought: I now know the final answer\nFinal Answer: It is a red cat; audio saved.",
    ]
    agent, model = make_agent(turns, tmp_path, ran)

    out = agent.invoke({"input": "Caption this image and read it aloud", "files": [str(image)]})

    assert out["output"] == "It is a red cat; audio saved."
    assert ran == ["image-to-text", "text-to-speech"]
    assert out["plan"] == [
        {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": str(image)}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
    ]
    wav = Path(out["results"][1]["result"]["audio"])
    assert sf.info(wav).frames == 1600 and wav.is_relative_to(Path(out["trace"]).parent)

    # the stop sequence was used, so the invented observation never reached the history
    assert model.stops == [["\nObservation:"]] * 3
    history = model.received[2]
    assert observations(history) == [
        'Observation: {"text": "a red square picture of a cat"}',
        f'Observation: {json.dumps(out["results"][1]["result"])}',
    ]
    assert not any("a dog" in m.content for m in history)

    # the prompt lists every tool with its arguments from the args schema
    system = model.received[0][0]
    assert isinstance(system, SystemMessage)
    assert "- text-to-speech: Read a text aloud into a WAV file." in system.content
    assert "text (string, required): The text to read aloud." in system.content
    assert "speed (number, optional): Speaking rate." in system.content
    assert "config" not in system.content
    assert "one of [image-to-text, text-to-speech, nap, text-classification]" in system.content

    trace = json.loads(Path(out["trace"]).read_text())
    assert trace["agent"] == "react" and trace["plan"] == out["plan"]
    assert trace["usage"]["llm_calls"] == 3
    assert [c["output"] for c in trace["llm_calls"]][2].startswith("Thought: I now know")


def test_parse_error_is_fed_back_and_the_model_recovers(tmp_path):
    ran: list[str] = []
    turns = [
        "I think I should rest.",
        "Action: nap\nAction Input: {'seconds': 0.01}",
        "Final Answer: rested",
    ]
    agent, model = make_agent(turns, tmp_path, ran)

    out = agent.invoke("rest")

    assert out["output"] == "rested" and ran == ["nap"]
    first = observations(model.received[1])
    assert first == ["Observation: error: write 'Action:' and 'Action Input:' lines to use a tool, "
                     "or 'Final Answer:' to answer"]
    assert out["plan"] == [{"task": "nap", "id": 0, "dep": [], "args": {"seconds": 0.01}}]


def test_unknown_tool_and_tool_errors_become_observations(tmp_path):
    turns = [
        "Action: translate\nAction Input: {\"text\": \"hi\"}",
        "Action: text-classification\nAction Input: {\"text\": \"great movie\"}",
        "Action: nap\nAction Input: {\"secs\": 1}",
        "Final Answer: could not do it",
    ]
    agent, model = make_agent(turns, tmp_path)

    out = agent.invoke("classify")

    seen = observations(model.received[3])
    assert seen[0].startswith("Observation: error: unknown tool 'translate'; use one of: image-to-text")
    assert seen[1] == "Observation: error: text-classification: model not available"
    assert seen[2].startswith("Observation: error: nap: invalid arguments: seconds: required argument missing")
    assert [r["status"] for r in out["results"].values()] == ["failed", "failed"]
    assert out["output"] == "could not do it"


def test_step_limit_bounds_parse_failures(tmp_path):
    agent, model = make_agent(["gibberish"] * 5, tmp_path, max_steps=2)

    out = agent.invoke("do something")

    assert out["output"].startswith("stopped: reached the limit of 2 steps.\nNo tool was called.")
    assert len(model.received) == 3


def test_llm_call_limit(tmp_path):
    turns = [f"Action: nap\nAction Input: {{\"seconds\": 0.0{i}}}" for i in range(5)]
    agent, model = make_agent(turns, tmp_path, max_llm_calls=3)

    out = agent.invoke("rest")

    assert len(model.received) == 3 and len(out["plan"]) == 3
    assert out["output"].startswith("stopped: reached the limit of 3 LLM calls.\nDone so far:\n0. nap -> rested 0.0")


def test_time_budget(tmp_path):
    turns = [f"Action: nap\nAction Input: {{\"seconds\": 0.3{i}}}" for i in range(5)]
    agent, model = make_agent(turns, tmp_path, time_budget_s=0.5)

    out = agent.invoke("rest")

    assert out["output"].startswith("stopped: ran out of the time budget of 0.5 s.")
    assert 1 <= len(out["plan"]) <= 2 and len(model.received) <= 2


def test_repeated_call_returns_the_earlier_observation_then_stops(tmp_path):
    ran: list[str] = []
    same = "Action: nap\nAction Input: {\"seconds\": 0.01}"
    agent, model = make_agent([same, same, same, "Final Answer: unreachable"], tmp_path, ran, max_repeats=2)

    out = agent.invoke("rest")

    assert ran == ["nap"]
    assert "same call as step 0" in observations(model.received[2])[-1]
    assert out["output"].startswith("stopped: repeated the same nap call 2 times")
    assert len(model.received) == 3


def test_stream_events(tmp_path):
    agent, _ = make_agent(["Action: nap\nAction Input: 0.01", "Final Answer: done"], tmp_path)

    events = list(agent.stream_stage_events("rest"))

    assert [e["event"] for e in events] == ["llm_step", "task_start", "task_end", "llm_step", "response", "final"]
    assert events[1]["args"] == {"seconds": 0.01}
    assert events[-1]["output"]["output"] == "done"


@pytest.mark.parametrize("raw, expected", [
    ('{"text": "hi", "speed": 2}', {"text": "hi", "speed": 2}),
    ('```json\n{"text": "hi"}\n```', {"text": "hi"}),
    ("{'text': 'hi', 'speed': 1.5}", {"text": "hi", "speed": 1.5}),
    ('{"text": "hi",}', {"text": "hi"}),
    ('{"text": "ok", "loud": true}', {"text": "ok", "loud": True}),
    ("{'text': 'ok', 'loud': true,}", {"text": "ok", "loud": True}),
    ('{"text": "hi"} and then more words', {"text": "hi"}),
    ("hello there", {"text": "hello there"}),
    ('"hello there"', {"text": "hello there"}),
])
def test_lenient_action_input(raw, expected):
    speech = make_tools([])[1]
    assert parse_action_input(raw, speech) == expected


def test_bare_value_needs_a_single_argument_tool():
    two_required = StructuredTool.from_function(lambda a, b: a, name="pair", description="Two args.")
    with pytest.raises(ReActParseError, match='keys "a", "b"'):
        parse_action_input("just text", two_required)


def test_parse_step_prefers_what_comes_first_and_cuts_invented_text():
    tools = {t.name: t for t in make_tools([])}
    step = parse_step('Action: `nap`\nAction Input: {"seconds": 1}\nObservation: done\nFinal Answer: x', tools)
    assert step.tool.name == "nap" and step.args == {"seconds": 1}
    assert parse_step("Thought: done\nFinal Answer: a cat\nover two lines", tools).answer == "a cat\nover two lines"
    with pytest.raises(ReActParseError, match="must be followed by an 'Action Input:'"):
        parse_step("Action: nap", tools)


def test_with_the_project_tools_and_resource_references(image, tmp_path):
    tools = build_tools(["image-to-text", "text-to-speech"], executor=PictureExecutor())
    turns = [
        f"Action: image-to-text\nAction Input: {image}",
        "Action: text-to-speech\nAction Input: {'text': '<resource>-0'}",
        "Action: image-to-text\nAction Input: {\"image\": \"/etc/passwd\"}",
        "Final Answer: done",
    ]
    model = ScriptedTextModel(responses=[AIMessage(t) for t in turns])
    agent = ReActAgent(model, tools, workspace_root=tmp_path / "runs")

    out = agent.invoke({"input": "caption and speak", "files": [str(image)]})

    assert out["plan"][1] == {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}
    audio = Path(out["results"][1]["result"]["audio"])
    assert sf.info(audio).frames == 800 * len("a 8x8 red picture")
    assert out["results"][2]["status"] == "failed" and "escapes the allowed folders" in out["results"][2]["error"]
    assert "- image-to-text: Describe an image" in model.received[0][0].content


def test_the_answer_is_checked_for_invented_numbers_and_paths(tmp_path):
    """The same answer check as the global agent's response: numbers no tool produced, files nobody made."""
    turns = ['Action: nap\nAction Input: {"seconds": 0.01}',
             "Final Answer: I rested 0.01 s, then 0.75 s more, and saved /tmp/rest.wav."]
    agent, _ = make_agent(turns, tmp_path)

    out = agent.invoke("rest a moment")

    assert "Note: 0.75 is not a result of any task." in out["output"]
    assert "Note: /tmp/rest.wav was not produced by any task" in out["output"]
    trace = json.loads(Path(out["trace"]).read_text())
    assert trace["invented_numbers"] == ["0.75"] and trace["invented_paths"] == ["/tmp/rest.wav"]


def test_numbers_are_not_checked_when_no_tool_ran(tmp_path):
    agent, _ = make_agent(["Final Answer: pi is about 3.14"], tmp_path)
    assert agent.invoke("what is pi?")["output"] == "pi is about 3.14"
