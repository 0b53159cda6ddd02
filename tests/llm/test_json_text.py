"""The one lenient JSON reader (hugginggpt/llm/json_text.py) and the places that use it."""

from __future__ import annotations

import json
import time

import pytest

from hugginggpt.agent.plan import parse as plan_format
from hugginggpt.agent.plan.parse import parse_plan_text
from hugginggpt.llm.json_text import NestedTooDeeply, find_json, read_json

PLAN = [{"task": "summarization", "id": 0, "dep": [-1], "args": {"text": "null and void, true story"}}]


def test_planning_uses_the_one_reader():
    assert plan_format.find_json is find_json


def test_single_quoted_plan_keeps_json_words_inside_strings():
    """A Python-literal rewrite turned 'null and void, true story' into 'None and void, True story'."""
    single_quoted = json.dumps(PLAN).replace('"', "'")
    assert parse_plan_text(single_quoted) == PLAN
    assert parse_plan_text("Plan: " + single_quoted + " done") == PLAN


def test_python_literals_and_trailing_commas_are_read():
    assert find_json("{'a': None, 'b': True, 'c': [1, 2,],}") == {"a": None, "b": True, "c": [1, 2]}


def test_a_truncated_answer_is_closed():
    cut = json.dumps(PLAN)[:-12]  # the model ran out of tokens inside the last string
    value = find_json("Here it is: " + cut, lambda v: isinstance(v, list))
    assert value[0]["task"] == "summarization" and value[0]["args"]["text"].startswith("null and void")


def test_prose_in_brackets_is_not_taken_for_json():
    assert find_json('First [this], then {"id": "org/model"}') == {"id": "org/model"}
    with pytest.raises(ValueError, match="no JSON"):
        find_json("nothing [here] or {there}")


def test_fenced_json_wins_and_the_predicate_filters():
    text = 'see {"note": 1}\n```json\n[{"task": "a"}]\n```'
    assert find_json(text, lambda v: isinstance(v, list)) == [{"task": "a"}]


def test_deep_or_huge_junk_is_rejected_quickly():
    started = time.perf_counter()
    for junk in ("{" * 6000, "[" * 5000 + "]" * 5000, "x" * 100_000):
        with pytest.raises(ValueError):
            find_json(junk)
    with pytest.raises(NestedTooDeeply):
        read_json("[" * 5000 + "]" * 5000)
    assert time.perf_counter() - started < 10  # a generous bound: a quadratic scan would take minutes


def test_read_json_reads_one_value_scalars_too():
    assert read_json('{"text": "hi"} and then some') == {"text": "hi"}
    assert read_json('"hello"') == "hello" and read_json("5") == 5
    assert read_json("```json\n{'a': 1,}\n```") == {"a": 1}
    with pytest.raises(ValueError):
        read_json("just words")
