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
from hugginggpt.agent.plan_format import parse_plan_text, plan_schema
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.slow

TASKS = ["image-to-text", "text-to-speech", "image-classification", "summarization"]
REQUEST = "Describe example.jpg, then read the description aloud"


@pytest.fixture(scope="module")
def smollm2():
    from hugginggpt.llm import load_llm

    return load_llm("gguf:" + gguf_or_skip("smollm2-135m"), n_threads=2, n_ctx=4096, max_tokens=256)


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
    # the plan as the planner wrote it ({"step", "task", "id", "args"}) follows the schema it was held to
    trace = json.loads(Path(output["trace"]).read_text())
    written = parse_plan_text(trace["raw_plan_outputs"][0])
    jsonschema.validate(written if isinstance(written, dict) else {"tasks": written}, plan_schema(agent.task_infos))
    assert all(step["task"] in TASKS for step in plan)
    assert set(output["results"]) == {step["id"] for step in plan}, "every planned task ran or was reported"
    for outcome in output["results"].values():
        assert outcome["status"] in ("ok", "failed", "skipped")
        assert (outcome["result"] is not None) == (outcome["status"] == "ok")
        assert outcome["status"] == "ok" or outcome["error"]
    assert isinstance(output["output"], str) and output["output"].strip()

    trace = json.loads(Path(output["trace"]).read_text(encoding="utf-8"))
    planning_calls = [c for c in trace["llm_calls"] if c["stage"].startswith("planning")]
    assert planning_calls, "the planning call is in the trace"
    first_prompt = json.dumps(planning_calls[0]["prompt"])
    assert REQUEST in first_prompt and "image-to-text" in first_prompt
    assert trace["raw_plan_outputs"] and trace["raw_plan_outputs"][0] == planning_calls[0]["output"]
    assert trace["plan"] == plan
    assert {str(k) for k in trace["selections"]} == {str(step["id"]) for step in plan}
    for selection in trace["selections"].values():
        assert selection["model"].startswith("tiny/") or selection["model"] == "" or selection["reason"]
    assert {"plan", "selection", "execution", "response"} <= set(trace["timings"])
    assert all(seconds >= 0 for seconds in trace["timings"].values())
