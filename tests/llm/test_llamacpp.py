"""The embedded llama.cpp chat model on a real (tiny) GGUF: structured JSON, stop words, usage, caching."""

from __future__ import annotations

import subprocess
import threading

import pytest
from pydantic import BaseModel

from hugginggpt.llm import load_llm
from hugginggpt.llm.llamacpp import LlamaCppChatModel, llama_cpp_available

FETCH = "/work/shared/models/fetch-gguf"


class Step(BaseModel):
    task: str
    id: int
    dep: list[int]


class Plan(BaseModel):
    steps: list[Step]


@pytest.fixture(scope="module")
def smollm_path():
    if not llama_cpp_available():
        pytest.skip("llama-cpp-python is not importable")
    try:
        done = subprocess.run([FETCH, "smollm2-135m"], capture_output=True, text=True, timeout=600, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"fetch-gguf smollm2-135m failed: {exc}")
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def smollm(smollm_path):
    return load_llm("gguf:" + smollm_path, n_ctx=1024, max_tokens=96)


@pytest.mark.slow
def test_structured_output_is_schema_valid_json(smollm):
    structured = smollm.with_structured_output(Plan, method="json_schema", include_raw=True)
    out = structured.invoke("Plan the steps: caption the image a.jpg, then translate the caption to French.")
    assert out["parsing_error"] is None, out["raw"].content
    assert isinstance(out["parsed"], Plan)
    usage = out["raw"].usage_metadata
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


@pytest.mark.slow
def test_dict_schema_json_mode_and_stop(smollm):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    parsed = smollm.with_structured_output(schema).invoke("What is the capital of France?")
    assert isinstance(parsed, dict) and isinstance(parsed["answer"], str)
    text = smollm.bind(stop=[","]).invoke("List three colours separated by commas: red, green, blue").content
    assert "," not in text


@pytest.mark.slow
def test_weights_shared_and_calls_serialised(smollm, smollm_path):
    other = LlamaCppChatModel(model_path=smollm_path, n_ctx=1024, max_tokens=8)
    assert other._client() is smollm._client()  # one Llama per (file, n_ctx)
    answers: list[str] = []
    threads = [threading.Thread(target=lambda: answers.append(other.invoke("Say hi").content)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 2 and answers[0] == answers[1]  # fixed seed: same prompt, same answer
