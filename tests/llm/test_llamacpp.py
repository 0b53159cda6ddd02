"""The embedded llama.cpp chat model on real (tiny) GGUFs: structured JSON, stop words, usage, caching,
and native tool calling with auto tool choice (the function-calling agent on the embedded model)."""

from __future__ import annotations

import threading

import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggpt.llm import load_llm
from hugginggpt.llm.llamacpp import (
    LlamaCppChatModel,
    call_schema,
    grammar_schema,
    template_renders_tools,
)
from hugginggpt.llm.tool_calls import parse_tool_calls
from tests.shared import gguf_or_skip


class Step(BaseModel):
    task: str = Field(max_length=40)
    id: int
    dep: list[int] = Field(max_length=3)


class Plan(BaseModel):
    """Bounded (the grammar enforces the bounds), so the JSON ends within max_tokens on any CPU."""

    steps: list[Step] = Field(max_length=3)


@pytest.fixture(scope="module")
def smollm_path():
    return gguf_or_skip("smollm2-135m")


@pytest.fixture(scope="module")
def smollm(smollm_path):
    return load_llm("gguf:" + smollm_path, n_ctx=1024, max_tokens=96)


@pytest.mark.slow
def test_structured_output_is_schema_valid_json(smollm):
    structured = smollm.with_structured_output(Plan, method="json_schema", include_raw=True, max_tokens=400)
    out = structured.invoke("Plan the steps: caption the image a.jpg, then translate the caption to French.")
    assert out["parsing_error"] is None, out["raw"].content
    assert isinstance(out["parsed"], Plan)
    usage = out["raw"].usage_metadata
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


@pytest.mark.slow
def test_dict_schema_json_mode_and_stop(smollm):
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 60}}, "required": ["answer"]}
    parsed = smollm.with_structured_output(schema).invoke("What is the capital of France?")
    assert isinstance(parsed, dict) and isinstance(parsed["answer"], str)
    text = smollm.bind(stop=[","]).invoke("List three colours separated by commas: red, green, blue").content
    assert "," not in text


@pytest.mark.slow
def test_weights_shared_and_calls_serialised(smollm, smollm_path):
    other = LlamaCppChatModel(model_path=smollm_path, n_ctx=1024, max_tokens=8)
    llama, _ = other._client()
    assert llama is smollm._client()[0]  # one Llama per (file, n_ctx)
    # Two threads call the one context at once: the lock must let only one in at a time. (Their answers are
    # not compared: a prompt served from llama.cpp's prompt cache may decode differently on some CPUs.)
    inside, most_inside, guard = [0], [0], threading.Lock()
    original = llama.create_chat_completion

    def counted(*args, **kwargs):
        with guard:
            inside[0] += 1
            most_inside[0] = max(most_inside[0], inside[0])
        try:
            return original(*args, **kwargs)
        finally:
            with guard:
                inside[0] -= 1

    answers: list[str] = []
    llama.create_chat_completion = counted
    try:
        threads = [threading.Thread(target=lambda: answers.append(other.invoke("Say hi").content)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        del llama.create_chat_completion  # back to the class's method
    assert len(answers) == 2 and all(answer.strip() for answer in answers)
    assert most_inside[0] == 1


# --- native tool calling ("auto" tool choice) with Qwen2.5-Coder-0.5B, whose template renders tools ---


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"{city}: sunny, 21 degrees Celsius"


def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


@pytest.fixture(scope="module")
def qwen():
    path = gguf_or_skip("qwen2.5-coder-0.5b")
    return LlamaCppChatModel(model_path=path, n_ctx=2048, n_threads=2, max_tokens=64)


def test_grammar_schema_drops_only_the_bounds_a_grammar_cannot_spell_out():
    schema = {"type": "object", "properties": {
        "text": {"type": "string", "maxLength": 200_000, "description": "maxLength"},
        "code": {"type": "string", "maxLength": 8},
        "items": {"type": "array", "items": {"type": "string", "maxLength": 10**6}, "maxItems": 3}}}
    assert grammar_schema(schema) == {"type": "object", "properties": {
        "text": {"type": "string", "description": "maxLength"},
        "code": {"type": "string", "maxLength": 8},
        "items": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}}
    assert schema["properties"]["text"]["maxLength"] == 200_000  # the tool's own schema is left as it was


@pytest.mark.slow
def test_a_required_call_among_several_tools_is_one_call_whatever_the_model_would_write(smollm_path):
    """tool_choice="any" with several tools (create_agent's ToolStrategy binds so): the grammar lets the
    model write only a call of one of them, even with the task table's long text bounds."""
    from hugginggpt.tools import build_tools

    tools = [StructuredTool.from_function(get_weather), StructuredTool.from_function(word_count),
             *build_tools(["translation"])]
    assert len(call_schema([{"function": {"name": "a", "parameters": {}}}, {"function": {"name": "b"}}])["oneOf"]) == 2
    llm = load_llm("gguf:" + smollm_path, n_ctx=2048, max_tokens=160)
    answer = llm.bind_tools(tools, tool_choice="any").invoke("What is the weather in Rome?")
    names = {"get_weather", "word_count", "translation"}
    if answer.response_metadata["finish_reason"] in {"length", "repetition"}:  # a loop inside a long text value
        [cut] = answer.invalid_tool_calls  # cut off before the call closed: a call that cannot be made, named
        assert answer.tool_calls == [] and cut["name"] in names and "cut off" in cut["error"]
    else:
        assert answer.content == "" and answer.invalid_tool_calls == []
        assert len(answer.tool_calls) == 1 and answer.tool_calls[0]["name"] in names
        assert isinstance(answer.tool_calls[0]["args"], dict) and answer.response_metadata["finish_reason"] == "tool_calls"
    named = llm.bind_tools(tools, tool_choice="translation").invoke("Translate 'good morning' into French.")
    assert [c["name"] for c in named.tool_calls] == ["translation"]


@pytest.mark.slow
def test_which_templates_render_tools(qwen, smollm):
    assert template_renders_tools(qwen._client()[0])  # Qwen2.5's template takes `tools`
    assert not template_renders_tools(smollm._client()[0])  # SmolLM2's does not: text protocol instead


def _no_call_left_in_text(message, names=("get_weather",)):
    """Whatever the model wrote, a call it wrote (tagged or bare JSON) is read as a call, never left as text."""
    assert parse_tool_calls(message.content, names).tool_calls == [], message.content


@pytest.mark.slow
def test_auto_tool_choice_calls_the_tool_then_uses_its_result(qwen):
    """Structure only: which tokens a 0.5B model writes depends on the CPU's instruction set."""
    tool = StructuredTool.from_function(get_weather)
    llm = qwen.bind_tools([tool])  # tool_choice defaults to auto, as create_agent binds
    question = HumanMessage("What is the weather in Paris right now?")
    first = llm.invoke([question])
    _no_call_left_in_text(first)
    assert all(c["name"] == "get_weather" and isinstance(c["args"], dict) and c["id"] for c in first.tool_calls)
    assert (first.response_metadata["finish_reason"] == "tool_calls") == bool(first.tool_calls)
    assert first.usage_metadata["input_tokens"] > 0 and first.usage_metadata["output_tokens"] > 0
    if not first.tool_calls:  # the model answered in words: make it call (grammar-constrained), then go on
        assert first.content.strip()
        first = qwen.bind_tools([tool], tool_choice="required").invoke([question])
        assert [c["name"] for c in first.tool_calls] == ["get_weather"]
    call = first.tool_calls[0]
    assert isinstance(call["args"].get("city"), str) and call["id"]
    history = [question, first, ToolMessage(tool.invoke(call["args"]), tool_call_id=call["id"])]
    second = llm.invoke(history)
    # the tool result reached the model: it answers, or (a 0.5B model often does) repeats the call
    assert second.usage_metadata["input_tokens"] > first.usage_metadata["input_tokens"]
    _no_call_left_in_text(second)
    assert second.content.strip() or all(c["name"] == "get_weather" for c in second.tool_calls)
    final = qwen.bind_tools([tool], tool_choice="none").invoke(history)  # told to answer now
    assert final.tool_calls == [] and final.invalid_tool_calls == []  # no tools offered: text only
    assert final.response_metadata["finish_reason"] != "tool_calls" and final.content.strip()
    # the call and its result were in the prompt (token counts do not depend on the CPU)
    alone = qwen.bind_tools([tool], tool_choice="none").invoke([question])
    assert final.usage_metadata["input_tokens"] > alone.usage_metadata["input_tokens"]


@pytest.mark.slow
def test_function_calling_agent_runs_on_the_embedded_model(qwen, tmp_path):
    """Structure only: whether a 0.5B model calls a tool here depends on the CPU; every call it makes
    runs, is recorded as a plan step with its outcome, and there is an answer."""
    from hugginggpt.agent import FunctionCallingAgent

    tools = [StructuredTool.from_function(get_weather), StructuredTool.from_function(word_count)]
    agent = FunctionCallingAgent(qwen, tools, max_llm_calls=3, max_steps=3, workspace_root=tmp_path)
    out = agent.invoke("What is the weather in Rome?")
    assert {step["task"] for step in out["plan"]} <= {"get_weather", "word_count"}
    assert all(isinstance(step["args"], dict) for step in out["plan"])
    assert set(out["results"]) == {step["id"] for step in out["plan"]}
    for step in out["plan"]:
        outcome = out["results"][step["id"]]
        assert outcome["status"] in ("ok", "failed") and (outcome["status"] == "ok" or outcome["error"])
        if step["task"] == "get_weather" and outcome["status"] == "ok":
            assert "sunny" in str(outcome["result"])  # the real tool's output, whatever the model wrote
    assert isinstance(out["output"], str) and out["output"].strip()


@pytest.mark.slow
def test_prefill_keeps_the_prompt_state_that_the_next_request_starts_from(smollm_path, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "ram")
    # a context size no other test uses: a Llama of its own, with a fresh prompt cache
    model = LlamaCppChatModel(model_path=smollm_path, n_ctx=1280, max_tokens=4)
    static = SystemMessage("You plan tasks for a user. Answer with one JSON list of steps. " * 12)
    tokens = model.prefill([static, HumanMessage("")])
    llama, _ = model._client()
    assert tokens > 150 and llama.cache.last_lengths == (tokens, 1) and llama.cache.stores == 1
    llama.reset()  # as another stage's prompt leaves the model: only the cache has the static part
    answer = model.invoke([static, HumanMessage("Caption photo.jpg")])
    assert llama.cache.hits == 1 and answer.usage_metadata["input_tokens"] > tokens


@pytest.mark.slow
def test_answer_scores_read_only_what_differs_from_the_question_asked_before(smollm_path, monkeypatch):
    """The same question with its options in another order shares its start: scoring it again reads only the
    rest, and gives the scores of a context that read it all."""
    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "off")
    llm = load_llm("gguf:" + smollm_path, n_ctx=1024, max_tokens=8)
    llama = llm._client()[0]
    preamble = "A shop sells many things: tools, books, fruit, stones and shoes. A customer asks for something to eat."
    question = [("system", "You pick one letter."), ("human", f"{preamble}\nWhich is a fruit?\nA) apple\nB) stone")]
    swapped = [question[0], ("human", f"{preamble}\nWhich is a fruit?\nA) stone\nB) apple")]
    answers = ["A", "B", "B) apple"]
    read: list[int] = []
    original = llama.eval
    monkeypatch.setattr(llama, "eval", lambda tokens: (read.append(len(tokens)), original(tokens))[1])
    llama.reset()
    first = llm.answer_scores(question, answers)
    whole, read[:] = read[0], []
    second = llm.answer_scores(swapped, answers)
    assert read[0] * 3 < whole  # the options and what follows them, not the whole prompt
    llama.reset()
    fresh = llm.answer_scores(swapped, answers)
    assert second == pytest.approx(fresh, abs=0.05) and second != pytest.approx(first, abs=0.05)
