"""Stage 2: candidates by downloads, one batched LLM call, and safe fallbacks."""

import json

import pytest

from hugginggpt.agent.plan import describe_tools
from hugginggpt.agent.plan.passes import validate_plan
from hugginggpt.agent.selection import ModelSelector
from hugginggpt.tools import task_table

from .conftest import Card, catalog_of, script

CATALOG = catalog_of([
    Card("org/blip-small", "image-to-text", downloads=10, description="Small captioner."),
    Card("org/blip-large", "image-to-text", downloads=500, description="Large captioner.", tags=["en", "license:mit"]),
    Card("org/vit-gpt2", "image-to-text", downloads=50, local_path="/models/vit-gpt2"),
    Card("org/speecht5", "text-to-speech", downloads=7),
])

PLAN = [{"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},
        {"task": "image-to-text", "id": 1, "args": {"image": "b.png"}},
        {"task": "text-to-speech", "id": 2, "args": {"text": "<resource>-0"}},
        {"task": "echo", "id": 3, "args": {"text": "hi"}}]


@pytest.fixture
def setup(tools):
    tasks = describe_tools(list(tools.values()), task_table())
    plan, _ = validate_plan(PLAN, tasks)
    return plan, tasks


async def test_one_batched_call_for_tasks_with_a_choice(setup):
    plan, tasks = setup
    llm = script({"0": {"id": "org/vit-gpt2", "reason": "runs locally"}, "1": {"id": "org/blip-large", "reason": "best"}})
    selections = await ModelSelector(llm, CATALOG, top_k=2).select("caption both", plan, tasks, {})
    assert selections == {
        0: {"model": "org/vit-gpt2", "reason": "runs locally"},
        1: {"model": "org/blip-large", "reason": "best"},
        2: {"model": "org/speecht5", "reason": "the only candidate for this task"},
    }  # task 3 (echo) is not a table task: no selection
    assert len(llm.prompts) == 1
    prompt = llm.prompts[0][0].content
    lines = [json.loads(line) for line in prompt.splitlines() if line.startswith('{"model_id"')]
    assert [c["model_id"] for c in lines] == ["org/blip-large", "org/vit-gpt2"] * 2  # top-2 by downloads
    assert lines[0]["metadata"] == {"downloads": 500, "likes": 0, "tags": ["en"]}
    assert lines[1]["metadata"]["local"] is True
    assert "Task 2" not in prompt and "User request: caption both" in prompt


async def test_single_candidates_need_no_llm_call(setup):
    plan, tasks = setup
    llm = script()  # any call would fail: the script is empty
    one_each = catalog_of([Card("org/only-captioner", "image-to-text", 1), Card("org/speecht5", "text-to-speech", 7)])
    selections = await ModelSelector(llm, one_each).select("x", plan, tasks, {})
    assert {s["model"] for s in selections.values()} == {"org/only-captioner", "org/speecht5"}
    assert llm.prompts == []


async def test_invalid_or_missing_choices_fall_back_to_the_top_candidate(setup):
    plan, tasks = setup
    llm = script('Sure: {"0": {"id": "openai/dall-e", "reason": "famous"}}')
    selections = await ModelSelector(llm, CATALOG).select("x", plan, tasks, {})
    assert selections[0] == {"model": "org/blip-large",
                             "reason": "the LLM chose 'openai/dall-e', which is not a candidate; using the most downloaded candidate"}
    assert selections[1]["model"] == "org/blip-large" and "gave no choice for task 1" in selections[1]["reason"]

    unusable = await ModelSelector(script("I like them all"), CATALOG).select("x", plan, tasks, {})
    assert unusable[0]["model"] == "org/blip-large"


async def test_structured_selection_constrains_ids_per_task(setup):
    plan, tasks = setup
    llm = script({"0": {"id": "org/blip-small", "reason": "fast"}, "1": {"id": "org/blip-small", "reason": "fast"}},
                 structured=True)
    selections = await ModelSelector(llm, CATALOG).select("x", plan, tasks, {})
    assert selections[0]["model"] == "org/blip-small"
    schema = llm.schemas[0]
    assert schema["properties"]["0"]["properties"]["id"]["enum"] == ["org/blip-large", "org/vit-gpt2", "org/blip-small"]
    assert schema["required"] == ["0", "1"]


async def test_no_catalog_means_no_selection(setup):
    plan, tasks = setup
    assert await ModelSelector(script(), None).select("x", plan, tasks, {}) == {}


async def test_candidates_the_tool_cannot_run_are_not_offered():
    """A local-only policy must not be offered Hub models it cannot run (JARVIS #217, #519)."""
    from langchain_core.language_models.fake_chat_models import (
        FakeMessagesListChatModel,
    )

    from hugginggpt.agent.plan import Plan, PlanTask, describe_tools
    from hugginggpt.agent.selection import ModelSelector
    from hugginggpt.tools.catalog import ModelCard, ModelCatalog
    from hugginggpt.tools.factory import build_tools
    from hugginggpt.tools.table import task_table

    catalog = ModelCatalog([ModelCard(id="hub/big", task="image-to-text", downloads=900),
                            ModelCard(id="hub/huge", task="image-to-text", downloads=800),
                            ModelCard(id="mine/local", task="image-to-text", downloads=1, local_path="/m")],
                           shipped=False, scan_hf_cache=False)
    tools = build_tools(["image-to-text"])
    infos = describe_tools(tools, task_table())
    plan = Plan(tasks=[PlanTask(task="image-to-text", id=0, args={"image": "a.png"})])
    llm = FakeMessagesListChatModel(responses=[])  # no LLM call may happen: one usable candidate
    only_local = ModelSelector(llm, catalog, runnable=lambda task, model: model == "mine/local")
    assert await only_local.select("caption a.png", plan, infos, {}) == {
        0: {"model": "mine/local", "reason": "the only candidate for this task"}}
    nothing_runs = ModelSelector(llm, catalog, top_k=1, runnable=lambda task, model: False)
    assert (await nothing_runs.select("caption a.png", plan, infos, {}))[0]["model"] == "hub/big"
