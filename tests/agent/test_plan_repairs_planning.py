"""Repairs in the planning stage: the request reaches validation, and the schema bounds a plan."""

import json

import pytest

from hugginggpt.agent.plan import describe_tools
from hugginggpt.agent.plan import MAX_TASKS
from hugginggpt.agent.plan.parse import plan_schema
from hugginggpt.agent.plan.prompt import planning_messages
from hugginggpt.tools import task_table

from .conftest import plan_with, script


@pytest.fixture
def tasks(tools):
    return describe_tools([tools["image-to-text"], tools["text-to-speech"]], task_table())


async def test_a_made_up_file_and_a_self_reference_are_repaired_from_the_request(tasks):
    answer = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "<resource>-0"}},
              {"task": "text-to-speech", "id": 1, "dep": [-1], "args": {"text": "{caption}"}}]
    llm = script(answer)
    result = await plan_with(llm, tasks, "Describe it and read the description aloud", files=["/data/cat.png"])
    assert result.plan.as_list() == [
        {"task": "image-to-text", "id": 0, "dep": [], "args": {"image": "/data/cat.png"}},
        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}},
    ]
    assert len(llm.prompts) == 1, "a repaired plan needs no second call"
    reasons = " | ".join(r["reason"] for r in result.repairs)
    assert "replaced by the request's image '/data/cat.png'" in reasons
    assert "is a placeholder for an earlier result" in reasons


async def test_a_plan_that_quotes_the_request_is_left_as_it_is(tasks):
    answer = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.png"}},
              {"task": "text-to-speech", "id": 1, "dep": [-1], "args": {"text": "Hello, the output is ready"}}]
    result = await plan_with(script(answer), tasks, "Caption cat.png and say 'Hello, the output is ready'")
    assert result.plan.by_id[1].args["text"] == "Hello, the output is ready"
    assert result.repairs == []


def test_the_plan_schema_caps_the_number_of_tasks(tasks):
    array = plan_schema(tasks)["properties"]["tasks"]
    assert array["maxItems"] == MAX_TASKS
    grammar_module = pytest.importorskip("llama_cpp.llama_grammar")  # the converter the embedded model uses
    json_schema_to_gbnf = grammar_module.json_schema_to_gbnf

    grammar = json_schema_to_gbnf(json.dumps(plan_schema(tasks)))
    assert grammar.count("tasks-item") >= MAX_TASKS


def test_demonstrations_use_only_offered_tasks_and_keep_the_prompt_small(tasks):
    messages = planning_messages("Caption cat.png", tasks)
    shown = [json.loads(m.content) for m in messages[1:-1] if m.type == "ai"]
    assert all(step["task"] in tasks for plan in shown for step in plan)
    assert sum(len(m.content) for m in messages) < 6000  # roughly 1,500 tokens: fits a 4k context with room


async def test_a_step_redoing_an_earlier_turn_reads_that_turns_answer(tasks):
    """The planner hands the conversation's turns to the passes: a step that quotes the ask of an earlier turn
    is taken out when nothing of this plan needs it (the caption nobody reads, its words the ask that made the
    picture), and kept when a task reads what it makes of that turn's picture."""
    history = [("human", "caption the photo holiday.png"), ("ai", "A beach at sunset."),
               ("human", "draw a red fox in the snow"), ("ai", "Here it is: outputs/fox_snow.png")]
    redone = {"step": "draw a red fox in the snow", "task": "image-to-text", "id": 0,
              "args": {"image": "outputs/fox_snow.png"}}
    spoken = {"step": "say that it is ready", "task": "text-to-speech", "id": 1, "args": {"text": "It is ready."}}
    llm = script([redone, spoken])
    result = await plan_with(llm, tasks, "say out loud that it is ready", history=history)
    assert [t.task for t in result.plan.tasks] == ["text-to-speech"]
    assert len(llm.prompts) == 1
    assert [r["task_id"] for r in result.repairs if r["pass"] == "earlier-asks"] == [0]
    read = {**spoken, "step": "read the description aloud", "args": {"text": "<resource>-0"}}
    result = await plan_with(script([redone, read]), tasks, "read out loud what you drew", history=history)
    assert [t.task for t in result.plan.tasks] == ["image-to-text", "text-to-speech"]
    assert not [r for r in result.repairs if r["pass"] == "earlier-asks"]
