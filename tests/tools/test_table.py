"""The task table: complete (every Hub tag the brief lists), valid, and strict about bad data."""

from __future__ import annotations

import pytest
import yaml

from hugginggpt.errors import TaskTableError, UnknownTaskError
from hugginggpt.tools import ArgSpec, TaskSpec, get_task, non_tool_tasks, task_table
from hugginggpt.tools.table import (
    MEDIA_KINDS,
    OUTPUT_KINDS,
    TABLE_PATH,
    load_table,
    parse_table,
)

REQUIRED_TAGS = """
text-classification token-classification table-question-answering question-answering
zero-shot-classification translation summarization feature-extraction text-generation
text2text-generation fill-mask sentence-similarity text-ranking conversational text-to-speech
text-to-audio automatic-speech-recognition audio-to-audio audio-classification
voice-activity-detection depth-estimation image-classification object-detection
image-segmentation text-to-image image-to-text image-to-image image-to-video
unconditional-image-generation video-classification text-to-video zero-shot-image-classification
zero-shot-object-detection mask-generation image-feature-extraction keypoint-detection
image-text-to-text visual-question-answering document-question-answering video-text-to-text
tabular-classification tabular-regression time-series-forecasting
""".split()


def test_every_listed_hub_tag_is_a_task():
    missing = [tag for tag in REQUIRED_TAGS if tag not in task_table()]
    assert missing == []


@pytest.mark.parametrize("name", sorted(task_table()))
def test_entry_is_usable_by_an_llm(name):
    spec = task_table()[name]
    assert spec.name == name
    assert len(spec.description) > 20
    assert 0 <= len(spec.args) <= 4
    assert set(spec.outputs) <= set(OUTPUT_KINDS)
    # Every task but unconditional generation takes at least one required input.
    assert spec.required_args or name == "unconditional-image-generation"
    for arg in spec.args:
        assert arg.description
        assert arg.name.isidentifier()


def test_media_args_are_the_file_kinds():
    spec = get_task("visual-question-answering")
    assert [a.name for a in spec.media_args] == ["image"]
    assert spec.arg("question").kind == "text"
    assert all(a.kind in MEDIA_KINDS for t in task_table().values() for a in t.media_args)


def test_arg_lookup_names_the_task():
    with pytest.raises(KeyError, match="image-classification.*colour"):
        get_task("image-classification").arg("colour")


def test_hub_argument_vocabulary_is_used():
    assert get_task("zero-shot-classification").arg("candidate_labels").kind == "list"
    assert get_task("translation").arg("tgt_lang")
    assert {a.name for a in get_task("question-answering").args} == {"question", "context"}
    assert get_task("object-detection").arg("threshold").default == 0.5


def test_unknown_task_suggests_close_names():
    with pytest.raises(UnknownTaskError, match="image-classification") as info:
        get_task("image-clasification")
    assert info.value.task == "image-clasification"
    assert isinstance(info.value, KeyError)


def test_non_tools_have_reasons_and_are_not_tools():
    reasons = non_tool_tasks()
    assert {"reinforcement-learning", "robotics", "graph-ml", "other"} <= set(reasons)
    assert all(len(reason) > 10 for reason in reasons.values())
    assert not set(reasons) & set(task_table())


def test_table_is_loaded_once():
    assert task_table() is task_table()


def test_specs_are_frozen():
    spec = get_task("summarization")
    with pytest.raises(Exception):
        spec.name = "other"  # type: ignore[misc]
    assert isinstance(spec, TaskSpec) and isinstance(spec.args[0], ArgSpec)


def _table(**arg_fields):
    arg = {"name": "image", "kind": "image", "required": True, "description": "x", **arg_fields}
    return {"tasks": {"my-task": {"category": "cv", "description": "d", "args": [arg], "outputs": ["text"]}}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_table(kind="picture"), "my-task.*kind"),
        (_table(kind="choice"), "choice without choices"),
        (_table(kind="text", choices=["a"]), "has choices"),
        (_table(kind="list", items="image"), "list items"),
        (_table(colour="red"), "colour"),
        (_table(default="x.png"), "required and so cannot have a default"),
        (_table(marks=["[MASK]"]), "marks are for a text argument"),
        (_table(kind="text", marks=[]), "marks are for a text argument"),
        ({"tasks": {}}, "non-empty 'tasks'"),
        ([1, 2], "non-empty 'tasks'"),
        ({"tasks": {"t": "not a mapping"}}, "must be a mapping"),
    ],
)
def test_malformed_tables_are_rejected(data, message):
    with pytest.raises(TaskTableError, match=message):
        parse_table(data)


def _with_task(**fields):
    data = _table()
    data["tasks"]["my-task"].update(fields)
    data["tasks"]["other-task"] = {"category": "cv", "description": "d", "outputs": ["text"], "contrast": "c",
                                   "args": [{"name": "image", "kind": "image", "required": True, "description": "x"}]}
    return data


@pytest.mark.parametrize(("fields", "message"), [
    ({"siblings": ["no-such-task"], "contrast": "c"}, "siblings names 'no-such-task'"),
    ({"siblings": ["my-task"], "contrast": "c"}, "siblings names 'my-task'"),
    ({"siblings": ["other-task"]}, "each need a contrast"),
    ({"settled_by": ["tgt_lang"]}, "settled_by names"),
])
def test_siblings_and_settings_name_what_the_table_has(fields, message):
    with pytest.raises(TaskTableError, match=message):
        parse_table(_with_task(**fields))
    assert parse_table(_with_task(siblings=["other-task"], contrast="c"))[0]["my-task"].siblings == ["other-task"]


def test_duplicate_argument_is_rejected():
    data = _table()
    args = data["tasks"]["my-task"]["args"]
    args.append(dict(args[0]))
    with pytest.raises(TaskTableError, match="duplicate argument 'image'"):
        parse_table(data)


def test_unknown_output_and_category_are_rejected():
    data = _table()
    data["tasks"]["my-task"]["outputs"] = ["hologram"]
    with pytest.raises(TaskTableError, match="hologram"):
        parse_table(data)
    data = _table()
    data["tasks"]["my-task"]["category"] = "astrology"
    with pytest.raises(TaskTableError, match="astrology"):
        parse_table(data)


@pytest.mark.parametrize("field, value, named", [("drawn_by", "pencil-control", "drawn_by"),
                                                  ("map_by", "pencil-control", "map_by"),
                                                  ("on_media", {"image": "pencil-control"}, "on_media.image")])
def test_a_drawing_map_or_media_task_must_be_in_the_table(field, value, named):
    data = _table()
    data["tasks"]["my-task"][field] = value
    with pytest.raises(TaskTableError, match=f"{named} names 'pencil-control'"):
        parse_table(data)
    data["tasks"]["my-task"]["on_media"] = {"smell": "my-task"}
    with pytest.raises(TaskTableError, match="no media kinds"):
        parse_table(data)
    table = task_table()
    assert all(table[spec.map_by].produces("image") for spec in table.values() if spec.map_by)


def test_one_task_gives_the_text_of_each_media_kind():
    data = _table()
    data["tasks"]["my-task"]["text_of"] = ["image"]
    data["tasks"]["other-task"] = dict(data["tasks"]["my-task"])
    with pytest.raises(TaskTableError, match="both give the text_of image"):
        parse_table(data)
    assert {kind: name for name, spec in task_table().items() for kind in spec.text_of} == {
        "audio": "automatic-speech-recognition", "image": "image-to-text"}


def test_a_task_cannot_be_both_tool_and_not_tool():
    data = _table()
    data["not_tools"] = {"my-task": "because"}
    with pytest.raises(TaskTableError, match="both tools and not_tools"):
        parse_table(data)


def test_load_table_reports_the_file(tmp_path):
    bad = tmp_path / "tasks.yaml"
    bad.write_text("tasks: [unclosed", encoding="utf-8")
    with pytest.raises(TaskTableError, match="tasks.yaml"):
        load_table(bad)
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(_table()), encoding="utf-8")
    specs, not_tools = load_table(good)
    assert list(specs) == ["my-task"] and not_tools == {}


def test_shipped_file_round_trips():
    specs, _ = load_table(TABLE_PATH)
    assert specs == task_table()
