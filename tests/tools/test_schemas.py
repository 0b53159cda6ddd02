"""Schemas generated from the table: args models for tools, and the plan's JSON schema."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from hugginggpt.tools import args_model, get_task, plan_json_schema, task_table
from hugginggpt.tools.schemas import MEDIA_HINT, json_types, model_name
from hugginggpt.tools.table import TaskSpec, parse_table

jsonschema = pytest.importorskip("jsonschema")  # the plan-schema tests need a JSON schema validator


def test_model_is_named_after_the_task_and_documented():
    model = args_model(get_task("text-to-speech"))
    assert model.__name__ == "TextToSpeech"
    assert model_name("text2text-generation") == "Text2textGeneration"
    schema = model.model_json_schema()
    assert schema["description"] == get_task("text-to-speech").description
    assert schema["properties"]["text"]["description"] == "The text to speak."


def test_model_is_cached_per_spec():
    assert args_model(get_task("fill-mask")) is args_model(get_task("fill-mask"))


@pytest.mark.parametrize("name", sorted(task_table()))
def test_every_task_builds_a_model_with_the_table_arguments(name):
    spec = task_table()[name]
    schema = args_model(spec).model_json_schema()
    assert list(schema.get("properties", {})) == [a.name for a in spec.args]
    assert sorted(schema.get("required", [])) == sorted(a.name for a in spec.required_args)
    assert schema["additionalProperties"] is False


def test_defaults_are_filled():
    model = args_model(get_task("image-classification"))
    assert model(image="cat.png").model_dump() == {"image": "cat.png", "top_k": 5}


def test_missing_argument_error_names_it():
    model = args_model(get_task("question-answering"))
    with pytest.raises(ValidationError) as info:
        model(question="Who?")
    assert [e["loc"] for e in info.value.errors()] == [("context",)]


def test_misspelt_argument_is_rejected_by_name():
    model = args_model(get_task("image-classification"))
    with pytest.raises(ValidationError) as info:
        model(image="cat.png", topk=3)
    errors = info.value.errors()
    assert errors[0]["loc"] == ("topk",) and errors[0]["type"] == "extra_forbidden"


def test_number_kinds_and_bounds():
    detect = args_model(get_task("object-detection"))
    assert detect(image="a.png", threshold="0.25").threshold == 0.25  # LLMs send strings
    with pytest.raises(ValidationError, match="threshold"):
        detect(image="a.png", threshold=1.5)
    classify = args_model(get_task("image-classification"))
    assert isinstance(classify(image="a.png", top_k=3.0).top_k, int)
    with pytest.raises(ValidationError, match="top_k"):
        classify(image="a.png", top_k=0)
    with pytest.raises(ValidationError, match="top_k"):
        classify(image="a.png", top_k=2.5)
    seed = args_model(get_task("unconditional-image-generation"))
    assert seed().seed is None and seed(seed=0).seed == 0


def test_choice_is_enforced():
    model = args_model(get_task("image-segmentation"))
    assert model(image="a.png", subtask="panoptic").subtask == "panoptic"
    with pytest.raises(ValidationError, match="subtask"):
        model(image="a.png", subtask="cubist")


def test_list_and_table_arguments():
    zero_shot = args_model(get_task("zero-shot-classification"))
    assert zero_shot(text="t", candidate_labels=["a", "b"]).candidate_labels == ["a", "b"]
    with pytest.raises(ValidationError, match="candidate_labels"):
        zero_shot(text="t", candidate_labels=[])
    table = args_model(get_task("table-question-answering"))
    columns = {"city": ["Paris", "Rome"], "people": ["2", "3"]}
    assert table(table=columns, question="q").table == columns
    assert table(table="data.csv", question="q").table == "data.csv"
    with pytest.raises(ValidationError, match="table"):
        table(table={"city": "Paris"}, question="q")


def test_media_description_explains_references():
    schema = args_model(get_task("image-to-text")).model_json_schema()
    assert MEDIA_HINT in schema["properties"]["image"]["description"]


# ------------------------------------------------------------------ plan JSON schema

def _validate(plan, schema=None):
    jsonschema.validate(plan, schema or plan_json_schema())


def test_valid_plans_pass():
    plan = [
        {"step": "describe cat.jpg", "task": "image-to-text", "id": 0, "args": {"image": "/tmp/cat.jpg"}},
        {"step": "read it aloud", "task": "text-to-speech", "id": 1, "args": {"text": "<resource>-0"}},
        {"step": "find objects", "task": "object-detection", "id": 2, "args": {"image": "x.png", "threshold": 0.3}},
        {"step": "sum the table", "task": "table-question-answering", "id": 3,
         "args": {"table": {"a": ["1"]}, "question": "sum?"}},
    ]
    _validate(plan)
    _validate([])


@pytest.mark.parametrize(
    "step",
    [
        {"task": "image-to-text", "id": 0, "args": {"image": "a.png"}},  # step missing
        {"step": "s", "task": "image-to-txt", "id": 0, "args": {"image": "a.png"}},  # unknown task
        {"step": "s", "task": "image-to-text", "id": 0, "args": {"text": "a"}},  # another task's args
        {"step": "s", "task": "image-to-text", "id": 0, "args": {"image": "a.png", "x": 1}},  # extra
        {"step": "s", "task": "image-to-text", "id": "0", "args": {"image": "a.png"}},  # id type
        {"step": "s", "task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "a.png"}},  # dep: not written
        {"step": "s", "task": "image-to-text", "args": {"image": "a.png"}},  # id missing
        {"step": "s", "task": "image-segmentation", "id": 0, "args": {"image": "a", "subtask": "x"}},
        {"step": "s", "task": "object-detection", "id": 0, "args": {"image": "a", "threshold": "hi"}},
        {"step": "s", "task": "image-to-text", "id": 0, "args": {"image": "a.png"}, "why": "x"},
    ],
)
def test_invalid_plans_fail(step):
    with pytest.raises(jsonschema.ValidationError):
        _validate([step])


def test_schema_for_a_subset_lists_only_those_tasks():
    specs = [get_task("summarization"), get_task("translation")]
    schema = plan_json_schema(specs)
    names = [b["properties"]["task"]["enum"] for b in schema["items"]["anyOf"]]
    assert names == [["summarization"], ["translation"]]
    with pytest.raises(jsonschema.ValidationError):
        _validate([{"task": "text-to-image", "id": 0, "args": {"text": "x"}}], schema)


def test_schema_uses_only_grammar_friendly_keywords():
    allowed = {"type", "enum", "properties", "required", "additionalProperties", "items", "anyOf"}

    def walk(node):
        if isinstance(node, dict):
            assert set(node) <= allowed, node
            for key, value in node.items():
                if key == "properties":
                    for sub in value.values():
                        walk(sub)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    schema = plan_json_schema()
    walk(schema)
    json.dumps(schema)  # plain JSON


def test_plan_schema_follows_a_custom_table():
    specs, _ = parse_table({"tasks": {"toy-task": {
        "category": "nlp", "description": "d", "outputs": ["text"],
        "args": [{"name": "mode", "kind": "choice", "choices": ["a", "b"], "description": "m"}]}}})
    schema = plan_json_schema(specs.values())
    _validate([{"step": "s", "task": "toy-task", "id": 0, "args": {"mode": "b"}}], schema)
    with pytest.raises(jsonschema.ValidationError):
        _validate([{"step": "s", "task": "toy-task", "id": 0, "args": {"mode": "c"}}], schema)
    assert isinstance(specs["toy-task"], TaskSpec)


def test_json_types_reads_a_tool_argument_s_types():
    props = args_model(get_task("table-question-answering")).model_json_schema()["properties"]
    assert json_types(props["question"]) == ["string"]
    assert json_types(props["table"]) == ["object", "string"]  # a table or a CSV path
    optional = args_model(get_task("text-to-image")).model_json_schema()["properties"]["negative_prompt"]
    assert json_types(optional) == ["string"]  # null left out
    assert json_types({"description": "anything"}) == []
