"""Scripted chat models, deterministic tools and small catalogs for the agent tests.

The chat models answer from a script and record every prompt they get, so tests check both what
the agent does with an answer and what it asked. The tools compute their results from their inputs
(the TTS tool writes a real WAV file in the run's workspace) and record each call's settings.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import StructuredTool
from PIL import Image
from pydantic import BaseModel, Field

from hugginggpt.errors import TaskError
from hugginggpt.tools.catalog import ModelCard, ModelCatalog
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.resources import save_audio


class ScriptedChatModel(FakeMessagesListChatModel):
    """Answers with ``responses`` in order (an error once they run out) and records each prompt."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    structured: bool = False
    schemas: list[Any] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.prompts.append(list(messages))
        if self.i >= len(self.responses):
            raise RuntimeError(f"the script has only {len(self.responses)} answers")
        message = self.responses[self.i]
        self.i += 1
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        return ChatResult(generations=[ChatGeneration(message=message.model_copy(update={"usage_metadata": usage}))])

    def with_structured_output(self, schema, *, include_raw=False, **kwargs):
        """Like a provider's JSON-schema mode: the answer's text is the JSON (when ``structured``)."""
        if not self.structured:
            return super().with_structured_output(schema, include_raw=include_raw, **kwargs)
        self.schemas.append(schema)

        def parse(message: AIMessage) -> dict[str, Any]:
            try:
                return {"raw": message, "parsed": json.loads(message.content), "parsing_error": None}
            except json.JSONDecodeError as exc:
                return {"raw": message, "parsed": None, "parsing_error": exc}

        return self | RunnableLambda(parse)


class SamplingChatModel(ScriptedChatModel):
    """A scripted model with a temperature and a seed, like a provider's: it answers from ``by_draw``
    for its (temperature, seed) when that holds an answer, else from the script, and records the
    (temperature, seed) of every call in ``draws`` (shared by its copies)."""

    temperature: float = 0.2
    seed: int = 0
    by_draw: dict[tuple[float, int], list[str]] = Field(default_factory=dict)
    draws: list[tuple[float, int]] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.draws.append((self.temperature, self.seed))
        answers = self.by_draw.get((self.temperature, self.seed))
        if answers:
            self.prompts.append(list(messages))
            usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
            return ChatResult(generations=[ChatGeneration(message=AIMessage(answers.pop(0), usage_metadata=usage))])
        return super()._generate(messages, stop, run_manager, **kwargs)


class ReplayModel(FakeMessagesListChatModel):
    """Replays scripted AI messages once, in order, and remembers what it was sent; asking past the
    script fails the test (the parent class would cycle back to the first answer)."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.i >= len(self.responses):
            raise AssertionError("the agent asked the model more often than scripted")
        self.received.append(list(messages))
        self.before_reply(stop)
        result = super()._generate(messages, stop, run_manager, **kwargs)
        if self.i == 0:  # the parent cycles back to the start; a script never does
            self.i = len(self.responses)
        return result

    def before_reply(self, stop: list[str] | None) -> None:
        """What a subclass does with the stop sequences before the next scripted answer goes out."""


def script(*answers: Any, structured: bool = False) -> ScriptedChatModel:
    """A chat model answering with these texts (non-strings are sent as JSON)."""
    texts = [a if isinstance(a, str) else json.dumps(a) for a in answers]
    return ScriptedChatModel(responses=[AIMessage(t) for t in texts], structured=structured)


class Recorder:
    """What the tools saw: (task name, args, hf_model, workspace) and start/end times."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def record(self, name: str, args: dict[str, Any], config: RunnableConfig, **extra: Any) -> dict[str, Any]:
        configurable = config.get("configurable", {})
        entry = {"task": name, "args": args, "model": configurable.get("hf_model"),
                 "workspace": configurable.get("workspace"), **extra}
        self.calls.append(entry)
        return entry


class ImageArgs(BaseModel):
    image: str = Field(description="An image file.")


class TextArgs(BaseModel):
    text: str = Field(description="A text.")


class SleepArgs(BaseModel):
    seconds: float = Field(description="How long to wait.")


def make_tools(recorder: Recorder) -> dict[str, StructuredTool]:
    """Deterministic tools: two table tasks (caption, speech), a failing detector, echo and sleep."""

    def caption(image: str, config: RunnableConfig) -> dict[str, Any]:
        recorder.record("image-to-text", {"image": image}, config)
        return {"text": f"a photo of a {Path(image).stem}"}

    def speak(text: str, config: RunnableConfig) -> dict[str, Any]:
        recorder.record("text-to-speech", {"text": text}, config)
        workspace = config["configurable"]["workspace"]
        samples = np.sin(np.linspace(0, 2 * np.pi * 440, 1600 * max(1, len(text) // 10))).astype(np.float32)
        return {"audio": save_audio(samples, 16000, workspace), "text": text}

    def detect(image: str, config: RunnableConfig) -> dict[str, Any]:
        recorder.record("object-detection", {"image": image}, config)
        raise TaskError("object-detection", f"cannot read {image!r}")

    def echo(text: str, config: RunnableConfig) -> dict[str, Any]:
        recorder.record("echo", {"text": text}, config)
        return {"text": text.upper()}

    async def sleep(seconds: float, config: RunnableConfig) -> dict[str, Any]:
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        recorder.record("sleep", {"seconds": seconds}, config, start=started, end=time.perf_counter())
        return {"text": f"slept {seconds}"}

    return {
        "image-to-text": StructuredTool.from_function(caption, name="image-to-text",
                                                      description="Describe an image.", args_schema=ImageArgs),
        "text-to-speech": StructuredTool.from_function(speak, name="text-to-speech",
                                                       description="Read a text aloud.", args_schema=TextArgs),
        "object-detection": StructuredTool.from_function(detect, name="object-detection",
                                                         description="Find objects.", args_schema=ImageArgs),
        "echo": StructuredTool.from_function(echo, name="echo", description="Shout a text back.", args_schema=TextArgs),
        "sleep": StructuredTool.from_function(coroutine=sleep, name="sleep", description="Wait.", args_schema=SleepArgs),
    }


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def tools(recorder) -> dict[str, StructuredTool]:
    return make_tools(recorder)


Card = ModelCard


def catalog_of(cards: list[ModelCard]) -> ModelCatalog:
    """A real catalog holding only ``cards`` (no shipped list, no cache scan)."""
    return ModelCatalog(cards, shipped=False, scan_hf_cache=False)


class CallLog(BaseCallbackHandler):
    """Records the LangChain callbacks a run fires: chat model, tool and chain starts."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.parents: dict[str, Any] = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, **kwargs):
        self.events.append(("llm", "chat"))
        self.parents[str(run_id)] = parent_run_id

    def on_tool_start(self, serialized, input_str, *, run_id, parent_run_id=None, **kwargs):
        self.events.append(("tool", (serialized or {}).get("name", "")))
        self.parents[str(run_id)] = parent_run_id

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        self.events.append(("chain", kwargs.get("name", "")))
        self.parents[str(run_id)] = parent_run_id


@pytest.fixture
def image(tmp_path) -> Path:
    """The user's input: a red 8x8 PNG in a folder of its own."""
    path = tmp_path / "user" / "cat.png"
    path.parent.mkdir()
    Image.new("RGB", (8, 8), (220, 10, 10)).save(path)
    return path


class PictureExecutor(Executor):
    """A real executor for two tasks, so the project's generated tools run end to end offline."""

    name = "test-pictures"

    def can_run(self, task: str, model: str | None) -> bool:
        return task in ("image-to-text", "text-to-speech")

    def run(self, call: TaskCall) -> dict:
        if call.task.name == "image-to-text":
            with Image.open(call.args["image"]) as img:  # a local Path resolved by the workspace
                return {"text": f"a {img.size[0]}x{img.size[1]} red picture"}
        path = call.workspace.new_path("audio")
        sf.write(path, np.zeros(800 * len(call.args["text"]), dtype="float32"), 16000)
        return {"audio": str(path)}


async def plan_with(llm, tasks, text, *, files=None, structured="auto", trace=None, history=None):
    """Stage 1 as the global-plan agent runs it: a planner made for ``tasks``, one request."""
    from hugginggpt.agent.plan.planner import Planner
    from hugginggpt.agent.request import AgentRequest

    request = AgentRequest.parse({"input": text, "files": list(files or []), "chat_history": history or []})
    return await Planner(llm, tasks, structured=structured).plan(request, trace=trace)


def follows(schema: dict[str, Any], steps: list[dict[str, Any]]) -> bool:
    """Whether ``steps`` (tasks as the planner writes them) can be written, one after the other, under the
    states that the plan schema's grammar follows (``llm/json_grammar.ITEM_STATES``)."""
    import jsonschema

    from hugginggpt.llm.json_grammar import ITEM_STATES

    flow = schema["properties"]["tasks"][ITEM_STATES]
    state = flow["start"]
    for element in steps:
        after = [nxt for index, nxt in flow["states"][state]
                 if jsonschema.Draft202012Validator(flow["items"][index]).is_valid(element)]
        if not after:
            return False
        state = after[0]
    return True
