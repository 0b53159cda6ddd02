"""The trace's one-walk conversion: strict JSON with secrets redacted, whatever the values' types."""

import enum
import json
import math
from pathlib import Path

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from hugginggpt.agent.trace import Trace, clean
from hugginggpt.redact import redact


class Level(enum.IntEnum):
    HIGH = 2


class Tag(str, enum.Enum):
    CAT = "cat"


class Card(BaseModel):
    id: str
    api_key: str


class Text(str):
    pass


def test_secrets_are_redacted_wherever_they_are():
    value = {
        "prompt": ["line one\nsk-abcdefghijkl", ("BEARER abcdefghijkl",)],
        "nested": {"Authorization": "Basic xyz", "access_token": "", "prompt_tokens": 12},
        "card": Card(id="org/model", api_key="plain-secret"),
        "path": Path("/runs/hf_abcdefghijkl/out.png"),
        "text": Text("use sk-abcdefghijkl"),
    }
    assert clean(value) == {
        "prompt": ["line one\n***", ["BEARER ***"]],
        "nested": {"Authorization": "***", "access_token": "", "prompt_tokens": 12},
        "card": {"id": "org/model", "api_key": "***"},
        "path": "/runs/***/out.png",
        "text": "use ***",
    }


def test_values_become_strict_json():
    value = {1: {math.nan, 1.5}, "inf": [math.inf, -math.inf], "level": Level.HIGH, "tag": Tag.CAT,
             "message": HumanMessage("hi"), "other": None,
             "repr": complex(1, 2), "flag": True}
    cleaned = clean(value)
    assert sorted(map(str, cleaned["1"])) == ["1.5", "NaN"] and cleaned["inf"] == ["Infinity", "-Infinity"]
    assert cleaned["message"]["content"] == "hi" and cleaned["message"]["type"] == "human"
    assert cleaned["repr"] == "(1+2j)" and cleaned["flag"] is True and cleaned["other"] is None
    text = json.dumps(cleaned, allow_nan=False)  # strict: would raise on a bare NaN
    assert json.loads(text)["level"] == 2 and json.loads(text)["tag"] == "cat"


def test_clean_redacts_plain_json_data_as_redact_does_its_strings():
    data = {"a": ["x", {"token": "t0ken-value", "n": 1}], "b": "hf_abcdefghijkl and Bearer qwertyuiop"}
    assert clean(data) == {"a": ["x", {"token": "***", "n": 1}], "b": redact(data["b"])}
    assert redact(data["b"]) == "*** and Bearer ***"


def test_the_written_trace_holds_the_cleaned_data(tmp_path):
    trace = Trace(tmp_path / "trace.json", input="key sk-abcdefghijkl")
    trace.set("score", math.nan)
    trace.add_llm_call("planning", [HumanMessage("hi").model_dump()], "out", usage={"input_tokens": 3})
    data = json.loads(trace.write().read_text())
    assert data["input"] == "key ***" and data["score"] == "NaN"
    assert data["llm_calls"][0]["prompt"][0]["content"] == "hi" and data["llm_calls"][0]["usage"] == {"input_tokens": 3}


def test_a_lone_surrogate_from_a_model_is_written_and_read_back(tmp_path):
    trace = Trace(tmp_path / "trace.json")
    trace.set("output", "half an emoji: \ud83d and more")  # what a model's broken text can hold
    written = json.loads(trace.write().read_text(encoding="utf-8"))
    assert written["output"] == "half an emoji: \ud83d and more"
