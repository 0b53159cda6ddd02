"""Concurrency: 100 requests through ``batch``/``abatch`` share nothing they should not (workspaces,
traces, ``<resource>-N`` outputs), memory stays bounded, and the local model cache loads a model once
however many tasks ask for it at the same time.
"""

from __future__ import annotations

import json
import re
import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from PIL import Image, PngImagePlugin
from pydantic import BaseModel

from hugginggpt.agent.global_plan import GlobalPlanAgent
from hugginggpt.agent.react import ReActAgent

N_REQUESTS = 100
JOB = re.compile(r"^job (\d+)$")


class RequestDrivenChat(BaseChatModel):
    """A stateless scripted controller: its answer depends only on the messages, so one instance can
    serve many concurrent runs and any cross-talk between runs shows up in their results."""

    @property
    def _llm_type(self) -> str:
        return "request-driven"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.answer(messages, stop or [])))])

    @staticmethod
    def answer(messages, stop: list[str]) -> str:
        humans = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        job = next((JOB.match(h.splitlines()[0]) for h in reversed(humans) if JOB.match(h.splitlines()[0])), None)
        observations = [h for h in humans if h.startswith("Observation:")]
        if job is None:  # the global-plan response stage
            return "done"
        n = job.group(1)
        if "\nObservation:" in stop:  # the ReAct agent stops the model before an observation
            if len(observations) == 0:
                return f'Thought: paint first\nAction: paint\nAction Input: {{"text": "job {n}"}}'
            if len(observations) == 1:
                return 'Thought: read it\nAction: inspect\nAction Input: {"image": "<resource>-0"}'
            return f"Final Answer: {observations[-1].removeprefix('Observation: ')}"
        return json.dumps([
            {"task": "paint", "id": 0, "dep": [], "args": {"text": f"job {n}"}},
            {"task": "inspect", "id": 1, "dep": [0], "args": {"image": "<resource>-0"}},
            {"task": "shout", "id": 2, "dep": [1], "args": {"text": "<resource>-1"}},
        ])


class TextArgs(BaseModel):
    text: str


class ImageArgs(BaseModel):
    image: str


def _workspace(config: RunnableConfig):
    return config["configurable"]["workspace"]


def paint(text: str, config: RunnableConfig) -> dict[str, Any]:
    """Writes a PNG carrying ``text`` in its metadata into the calling run's workspace."""
    path = _workspace(config).new_path("image")
    info = PngImagePlugin.PngInfo()
    info.add_text("label", text)
    Image.new("RGB", (4, 4), (len(text) % 255, 0, 0)).save(path, pnginfo=info)
    return {"image": str(path)}


def inspect(image: str, config: RunnableConfig) -> dict[str, Any]:
    """Reads the label back, and refuses a file from another run's workspace."""
    workspace = _workspace(config)
    if not Path(image).resolve().is_relative_to(workspace.root):
        raise ValueError(f"{image} is not in this run's workspace {workspace.root}")
    with Image.open(image) as img:
        return {"text": img.text["label"]}


def shout(text: str) -> dict[str, Any]:
    return {"text": text.upper()}


def tools() -> list[StructuredTool]:
    return [
        StructuredTool.from_function(paint, name="paint", description="Paint.", args_schema=TextArgs),
        StructuredTool.from_function(inspect, name="inspect", description="Inspect.", args_schema=ImageArgs),
        StructuredTool.from_function(shout, name="shout", description="Shout.", args_schema=TextArgs),
    ]


def check_isolated(outputs: list[dict], kind: str) -> None:
    traces = [Path(o["trace"]) for o in outputs]
    assert len(set(traces)) == len(outputs) == len({t.parent for t in traces})
    for n, (output, trace_path) in enumerate(zip(outputs, traces)):
        trace = json.loads(trace_path.read_text())
        assert trace["input"] == f"job {n}"
        results = output["results"]
        assert all(r["status"] == "ok" for r in results.values()), results
        image = Path(results[0]["result"]["image"])
        assert image.parent == trace_path.parent / "outputs"  # produced in its own run's folder
        if kind == "global":
            assert results[2]["result"] == {"text": f"JOB {n}"}
        else:
            assert results[1]["result"] == {"text": f"job {n}"}
            assert json.loads(output["output"]) == {"text": f"job {n}"}  # the last observation, as JSON


@pytest.mark.timeout(300)
async def test_abatch_of_global_plan_runs_shares_no_state(tmp_path) -> None:
    agent = GlobalPlanAgent(RequestDrivenChat(), tools=tools(), workspace_root=tmp_path, structured=False)
    requests = [f"job {n}" for n in range(N_REQUESTS)]
    tracemalloc.start()
    try:
        outputs = await agent.abatch(requests, config={"max_concurrency": 8})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    check_isolated(outputs, "global")
    assert peak < 150 * 2**20, f"peak traced memory {peak / 2**20:.0f} MiB for {N_REQUESTS} runs"


@pytest.mark.timeout(300)
def test_batch_of_global_plan_runs_shares_no_state(tmp_path) -> None:
    agent = GlobalPlanAgent(RequestDrivenChat(), tools=tools(), workspace_root=tmp_path, structured=False)
    outputs = agent.batch([f"job {n}" for n in range(N_REQUESTS)], config={"max_concurrency": 8})
    check_isolated(outputs, "global")


@pytest.mark.timeout(300)
def test_batch_of_react_runs_shares_no_state(tmp_path) -> None:
    agent = ReActAgent(RequestDrivenChat(), tools(), workspace_root=tmp_path)
    outputs = agent.batch([f"job {n}" for n in range(N_REQUESTS)], config={"max_concurrency": 8})
    check_isolated(outputs, "react")


@pytest.mark.timeout(300)
def test_the_local_model_cache_loads_a_model_once_under_concurrent_use(tmp_path) -> None:
    from hugginggpt.tools import build_tools
    from hugginggpt.tools.executors.local import LocalExecutor
    from hugginggpt.tools.resources import Workspace
    from tests.tiny_models import tiny_model_path

    folder = tiny_model_path("text-classification")
    executor = LocalExecutor(max_models=2, device="cpu")
    (tool,) = build_tools(["text-classification"], executor=executor, workspace=Workspace(tmp_path / "run"))
    barrier = threading.Barrier(8)

    def classify(n: int) -> dict:
        barrier.wait()  # all eight ask for the model at the same moment
        return tool.invoke({"text": f"the cat {n}"}, config={"configurable": {"hf_model": str(folder)}})

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(classify, range(16)))
    assert executor.load_count == 1
    assert executor.loaded_models() == [str(folder)]
    assert all(isinstance(r["text"], str) and r["data"] for r in results)
