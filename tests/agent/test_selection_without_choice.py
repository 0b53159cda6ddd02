"""Selection spends no LLM call where there is no choice: the model the user named for a task, or the
single candidate the executor can run; and, end to end on the real all-MiniLM-L6-v2 folder, the
named model runs the task and the answer reports only what the task produced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan import describe_tools
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.agent.selection import ModelSelector
from hugginggpt.tools import task_table
from tests.shared import model_or_skip

from .conftest import Card, catalog_of, script

CARDS = [Card("org/blip-large", "image-to-text", downloads=500), Card("org/blip-small", "image-to-text", downloads=10),
         Card("org/vit-gpt2", "image-to-text", downloads=50), Card("org/speecht5", "text-to-speech", downloads=7),
         Card("org/bark", "text-to-speech", downloads=70)]
PLAN = [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
        {"task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}}]


@pytest.fixture
def setup(tools):
    tasks = describe_tools(list(tools.values()), task_table())
    plan, _ = validate_plan(PLAN, tasks)
    return plan, tasks


def model_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["VisionEncoderDecoderModel"]}')
    return folder


async def test_the_model_the_user_named_needs_no_llm_call(setup, tmp_path):
    plan, tasks = setup
    catalog = catalog_of(CARDS)
    catalog.register_local(model_folder(tmp_path, "blip-small"), task="image-to-text", model_id="org/blip-small",
                           preferred=True)
    catalog.register_local(model_folder(tmp_path, "speecht5"), task="text-to-speech", preferred=True)
    llm = script()  # any call fails: the script is empty
    selections = await ModelSelector(llm, catalog).select("caption a.png, read it aloud", plan, tasks, {})
    assert selections[0] == {"model": "org/blip-small", "reason": "the model the user named for this task"}
    assert selections[1]["model"] == str((tmp_path / "speecht5").resolve())
    assert llm.prompts == []


async def test_one_runnable_candidate_needs_no_llm_call(setup):
    plan, tasks = setup
    llm = script()
    on_disk = {"org/vit-gpt2", "org/speecht5"}  # offline, local policy: only these can run
    selector = ModelSelector(llm, catalog_of(CARDS), runnable=lambda task, model: model in on_disk)
    selections = await selector.select("x", plan, tasks, {})
    assert {i: s["model"] for i, s in selections.items()} == {0: "org/vit-gpt2", 1: "org/speecht5"}
    assert llm.prompts == []


async def test_the_llm_is_asked_once_only_about_real_choices(setup, tmp_path):
    plan, tasks = setup
    catalog = catalog_of(CARDS)
    catalog.register_local(model_folder(tmp_path, "bark"), task="text-to-speech", model_id="org/bark", preferred=True)
    llm = script({"0": {"id": "org/vit-gpt2", "reason": "small"}})
    selections = await ModelSelector(llm, catalog).select("x", plan, tasks, {})
    assert selections[0]["model"] == "org/vit-gpt2" and selections[1]["model"] == "org/bark"
    assert len(llm.prompts) == 1
    prompt = llm.prompts[0][0].content
    assert "Task 0" in prompt and "Task 1" not in prompt
    assert prompt.index("Answer with a JSON object") < prompt.index("User request: x")  # static part first


async def test_a_named_model_the_executor_cannot_run_is_not_forced(setup, tmp_path):
    plan, tasks = setup
    catalog = catalog_of(CARDS)
    catalog.register_local(model_folder(tmp_path, "blip-small"), task="image-to-text", model_id="org/blip-small",
                           preferred=True)
    llm = script()
    selector = ModelSelector(llm, catalog, runnable=lambda task, model: model in {"org/blip-large", "org/speecht5"})
    selections = await selector.select("x", plan, tasks, {})
    assert selections[0]["model"] == "org/blip-large" and llm.prompts == []


# ----------------------------------------------------------- end to end on the real MiniLM folder


async def test_named_local_model_runs_and_the_answer_keeps_to_the_results(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hugginggpt.tools import build_tools
    from hugginggpt.tools.catalog import ModelCatalog
    from hugginggpt.tools.executors import HybridExecutor
    from hugginggpt.tools.executors.local import LocalExecutor

    minilm = model_or_skip("all-minilm-l6-v2")
    catalog = ModelCatalog(scan_hf_cache=False)  # the shipped list: many sentence-similarity candidates
    catalog.register_local(minilm, task="sentence-similarity", preferred=True)
    executor = HybridExecutor(LocalExecutor(catalog, download=True, device="cpu"), None, catalog=catalog,
                              policy="local")
    tools = build_tools(["sentence-similarity", "summarization"], executor=executor, catalog=catalog)
    plan = [{"task": "sentence-similarity", "id": 0,
             "args": {"source_sentence": "A cat sits on the mat", "sentences": ["A dog lies on the rug"]}}]
    llm = script(plan, "The two sentences have a similarity of 0.0000000000000000.")  # an invented figure
    agent = GlobalPlanAgent(llm, tools, catalog, workspace_root=tmp_path / "runs")
    out = await agent.ainvoke("How similar are 'A cat sits on the mat' and 'A dog lies on the rug'?")

    assert out["selections"][0] == {"model": "sentence-transformers/all-MiniLM-L6-v2",
                                    "reason": "the model the user named for this task"}
    outcome = out["results"][0]
    assert outcome["status"] == "ok", outcome["error"]
    assert len(llm.prompts) == 2  # planning and response; no selection call
    response_prompt = llm.prompts[-1][-1].content
    assert "sentence-transformers/all-MiniLM-L6-v2" in response_prompt and "prediction:" in response_prompt
    assert "Note: 0.0000000000000000 is not a result of any task." in out["output"]
    trace = json.loads(Path(out["trace"]).read_text(encoding="utf-8"))
    assert [c["stage"] for c in trace["llm_calls"]] == ["planning", "response"]
    assert trace["invented_numbers"] == ["0.0000000000000000"]


async def test_no_llm_call_when_no_candidate_can_run(setup):
    plan, tasks = setup
    llm = script()
    selector = ModelSelector(llm, catalog_of(CARDS), runnable=lambda task, model: model == "org/speecht5")
    selections = await selector.select("x", plan, tasks, {})
    assert selections[0]["model"] == "org/blip-large" and "no candidate can run" in selections[0]["reason"]
    assert selections[1]["model"] == "org/speecht5"
    assert llm.prompts == []
