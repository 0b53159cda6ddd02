"""End to end with a real controller LLM: a small GGUF model plans, tiny local models run the tasks.

Nothing is scripted: SmolLM2-135M (through llama.cpp, under the plan's JSON-schema grammar) decides
the plan, the local executor runs real (random-weight) transformers models, and the response stage
asks the same LLM again. A 135M model plans poorly, so the test checks the structure of the run,
never the wording: the plan is schema-valid, every planned task ran or was reported, there is an
answer, and the trace explains each stage.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan.parse import (
    parse_plan_text,
    plan_schema,
    without_unfinished_task,
)
from hugginggpt.errors import PlanError
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.slow

TASKS = ["image-to-text", "text-to-speech", "image-classification", "summarization"]
REQUEST = "Describe example.jpg, then read the description aloud"


@pytest.fixture(scope="module")
def smollm2():
    from hugginggpt.llm import load_llm

    # 512 tokens hold the schema's 10 tasks at most (maxItems), so a plan is rarely cut off; the test allows it
    return load_llm("gguf:" + gguf_or_skip("smollm2-135m"), n_threads=2, n_ctx=4096, max_tokens=512)


@pytest.fixture
def local_tools(tmp_path):
    """Real tools on a real local executor; only image-to-text and text-to-speech have models, so a
    task planned for the other two fails as a real missing model does."""
    pytest.importorskip("torch")
    from hugginggpt.tools import build_tools
    from hugginggpt.tools.catalog import ModelCatalog
    from hugginggpt.tools.executors.local import LocalExecutor
    from tests.tiny_models import tiny_model_path

    catalog = ModelCatalog(shipped=False, scan_hf_cache=False)
    for task in ("image-to-text", "text-to-speech"):
        catalog.register_local(tiny_model_path(task), task=task, model_id=f"tiny/{task}")
    executor = LocalExecutor(catalog, max_models=2, device="cpu")
    return build_tools(TASKS, executor=executor, catalog=catalog), catalog


@pytest.fixture
def example_jpg(tmp_path) -> Path:
    from PIL import Image

    path = tmp_path / "inputs" / "example.jpg"
    path.parent.mkdir()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(path, format="JPEG")
    return path


def test_small_gguf_plans_runs_and_answers_with_a_complete_trace(smollm2, local_tools, example_jpg, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    tools, catalog = local_tools
    agent = GlobalPlanAgent(smollm2, tools=tools, catalog=catalog, workspace_root=tmp_path / "runs",
                            task_timeout=120)

    output = agent.invoke({"input": REQUEST, "files": [str(example_jpg)]})

    plan = output["plan"]
    # every answer the planner wrote ({"step", "task", "id", "args"}) follows the schema it was held to. A 135M
    # model can write tasks until max_tokens cuts it off (llama.cpp says finish_reason "length") or until it is
    # stopped for repeating itself ("repetition"; on some CPUs its draw does): then its whole tasks do, and the
    # unfinished one is dropped, never completed by a lenient reader
    trace = json.loads(Path(output["trace"]).read_text())
    planning_calls = [c for c in trace["llm_calls"] if c["stage"].startswith("planning")]
    assert [c["output"] for c in planning_calls] == trace["raw_plan_outputs"]
    for call in planning_calls:
        assert call["finish_reason"] in ("stop", "length", "repetition"), call["finish_reason"]
        if call["finish_reason"] == "stop":
            written = json.loads(call["output"])  # a finished answer is strict JSON
        else:
            try:
                read = parse_plan_text(call["output"])
            except PlanError:
                continue  # cut before anything whole
            written, _ = without_unfinished_task(call["output"], read if isinstance(read, dict) else {"tasks": read})
        jsonschema.validate(written, plan_schema(agent.task_specs))
    assert all(step["task"] in TASKS for step in plan)
    assert set(output["results"]) == {step["id"] for step in plan}, "every planned task ran or was reported"
    for outcome in output["results"].values():
        assert outcome["status"] in ("ok", "failed", "skipped")
        assert (outcome["result"] is not None) == (outcome["status"] == "ok")
        assert outcome["status"] == "ok" or outcome["error"]
    assert isinstance(output["output"], str) and output["output"].strip()

    assert planning_calls, "the planning call is in the trace"
    first_prompt = json.dumps(planning_calls[0]["prompt"])
    assert REQUEST in first_prompt and "image-to-text" in first_prompt
    assert trace["raw_plan_outputs"] and trace["raw_plan_outputs"][0] == planning_calls[0]["output"]
    assert trace["plan"] == plan
    # a model is selected for each step whose task has a candidate (only image-to-text and text-to-speech have
    # one here); a step of the other two runs without one and fails as a missing model does
    with_models = {"image-to-text", "text-to-speech"}
    assert {str(k) for k in trace["selections"]} == {str(step["id"]) for step in plan if step["task"] in with_models}
    for selection in trace["selections"].values():
        assert selection["model"].startswith("tiny/") or selection["model"] == "" or selection["reason"]
    assert {"plan", "selection", "execution", "response"} <= set(trace["timings"])
    assert all(seconds >= 0 for seconds in trace["timings"].values())


def test_a_plan_the_token_limit_cuts_inside_its_first_task_fails_with_that_reason(local_tools, tmp_path):
    """16 tokens hold no whole task (``{"tasks":[{"step": ...`` alone takes most of them): llama.cpp
    reports the cut (``finish_reason: length``), and planning fails saying so rather than running a
    task that the lenient reader finished with ends of its own. (Only an empty plan, ``{"tasks":[]}``,
    fits in 16 tokens: a planner that writes one has finished, and its plan stands.)"""
    import asyncio

    from hugginggpt.agent.plan import describe_tools
    from tests.agent.conftest import plan_with
    from hugginggpt.agent.trace import Trace
    from hugginggpt.llm import load_llm
    from hugginggpt.tools import task_table

    llm = load_llm("gguf:" + gguf_or_skip("smollm2-135m"), n_threads=2, n_ctx=2048, max_tokens=16)
    tasks = describe_tools(local_tools[0], task_table())
    trace = Trace(tmp_path / "trace.json")
    try:
        result = asyncio.run(plan_with(llm, tasks, REQUEST, files=["example.jpg"], trace=trace))
    except PlanError as exc:
        assert "stopped at its token limit (max_tokens=16) before it finished one task" in str(exc)
        assert [call["finish_reason"] for call in trace.data["llm_calls"]] == ["length", "length"]
    else:
        assert "stop" in [call["finish_reason"] for call in trace.data["llm_calls"]], trace.data["llm_calls"]
        assert result.plan.tasks == []
