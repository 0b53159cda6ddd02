"""Structured output on the embedded model: the schema the grammar holds the answer to is told to the
model, unless the prompt already names every field (the planner's prompt spells out its own format)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from hugginggpt.llm.llamacpp import described_schema
from tests.shared import gguf_or_skip


class Joke(BaseModel):
    setup: str = Field(description="question to set up a joke")
    punchline: str = Field(description="answer to resolve the joke")


SCHEMA = Joke.model_json_schema()


def test_the_schema_joins_the_system_message_or_becomes_one():
    asked = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me a joke about cats."}]
    told = described_schema(asked, SCHEMA)
    assert told[0]["role"] == "system" and told[0]["content"].startswith("Be brief.\n\n")
    assert '"punchline"' in told[0]["content"] and told[1:] == asked[1:]
    assert asked[0]["content"] == "Be brief."  # the caller's messages are not changed
    bare = described_schema(asked[1:], SCHEMA)
    assert [m["role"] for m in bare] == ["system", "user"] and '"setup"' in bare[0]["content"]


def test_a_prompt_that_names_every_field_is_left_alone():
    parts = [{"type": "text", "text": 'Answer {"setup": ..., "punchline": ...}'}]
    asked = [{"role": "user", "content": parts}]
    assert described_schema(asked, SCHEMA) == asked
    nested = {"type": "object", "properties": {"tasks": {"type": "array", "items": {
        "type": "object", "properties": {"task": {"type": "string"}, "dep": {"type": "array"}}}}}}
    assert described_schema([{"role": "user", "content": "tasks: a list of {task, dep}"}], nested)[0]["role"] == "user"
    assert described_schema([{"role": "user", "content": "tasks: a list"}], nested)[0]["role"] == "system"


@pytest.mark.slow
def test_told_the_schema_a_small_model_fills_every_field():
    from hugginggpt.llm import load_llm

    llm = load_llm("gguf:" + gguf_or_skip("qwen2.5-coder-0.5b"), n_ctx=2048, max_tokens=200)
    out = llm.with_structured_output(Joke, include_raw=True).invoke("Tell me a joke about cats.")
    assert out["parsing_error"] is None, out["raw"].content
    assert out["parsed"].setup.strip() and out["parsed"].punchline.strip()
