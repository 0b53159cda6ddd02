"""A request in Chinese, end to end with a real controller: Qwen2.5-Coder-1.5B (llama.cpp) plans it, the
plan it runs is the plan the model wrote (no pass takes a step out of a runnable plan), the quoted text is
copied as written, and the answer is in Chinese.

The tools compute nothing of interest (a fixed English translation, a real WAV file of silence), so the
test checks what the agent did with the model's answers, never their wording: llama.cpp gives other
tokens on other CPUs, and a 1.5B model may plan the request with one step fewer than a person would.
"""

from __future__ import annotations

import json
import re
import wave
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan.parse import parse_plan_text
from hugginggpt.tools import args_model, task_table
from hugginggpt.tools.factory import tool_description
from tests.shared import gguf_or_skip

pytestmark = pytest.mark.slow

_CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def qwen():
    from hugginggpt.llm import load_llm

    return load_llm("gguf:" + gguf_or_skip("qwen2.5-coder-1.5b"), n_threads=2, n_ctx=4096, max_tokens=512,
                    temperature=0)


def _tools(tmp_path: Path) -> list[StructuredTool]:
    table = task_table()

    def translate(**args: Any) -> dict[str, Any]:
        return {"text": "The weather is very nice today."}

    def speak(**args: Any) -> dict[str, Any]:
        path = tmp_path / "speech.wav"
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1), out.setsampwidth(2), out.setframerate(16000), out.writeframes(b"\0\0" * 1600)
        return {"audio": str(path)}

    def caption(**args: Any) -> dict[str, Any]:
        return {"text": "a cat sleeping on a sofa"}

    made = []
    for name, func in (("translation", translate), ("text-to-speech", speak), ("image-to-text", caption)):
        spec = table[name]
        made.append(StructuredTool(name=name, description=tool_description(spec), args_schema=args_model(spec),
                                   func=func, metadata={"task": name}))
    return made


def test_a_chinese_request_runs_the_plan_the_model_wrote_and_gets_a_chinese_answer(qwen, tmp_path):
    agent = GlobalPlanAgent(qwen, tools=_tools(tmp_path), workspace_root=tmp_path / "runs")
    output = agent.invoke("把这段话翻译成英文，然后朗读出来：'明天下午三点开会。'")

    trace = json.loads(Path(output["trace"]).read_text(encoding="utf-8"))
    written = parse_plan_text(trace["raw_plan_outputs"][-1])
    written = written["tasks"] if isinstance(written, dict) else written
    tasks = [step["task"] for step in output["plan"]]
    assert tasks == [step["task"] for step in written]  # the model's plan runs as it wrote it
    assert tasks[0] == "translation", output["plan"]
    assert "明天下午三点开会" in output["plan"][0]["args"]["text"]  # copied as written, not translated
    assert all(outcome["status"] == "ok" for outcome in output["results"].values())
    assert len(_CJK.findall(output["output"])) >= 5, output["output"]
