"""What the benchmarks share: a controller-LLM stub that plays each agent's protocol with a set
latency, tools with a set latency, plan shapes, and result output.

The stub knows the plan it should produce (``StubLLM.plan``) and answers each agent the way a
perfect model would: the global-plan agent gets the whole plan as JSON in one answer; ReAct gets
one Action per turn (tasks in order); function calling gets every task whose inputs are ready as
parallel tool calls in one turn. Its latency is ``per_call_s + per_token_s * output tokens`` with
4 characters per token, so a long plan costs more than a short action.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
sys.path.insert(0, str(ROOT.parent))  # run as `python benchmarks/<name>.py` from a checkout

TASK = "summarization"  # text in, text out: any graph shape can be built from it


def chain_refs(deps: list[int]) -> str:
    return " and ".join(f"<resource>-{d}" for d in deps)


def text_plan(deps_by_node: list[list[int]]) -> list[dict[str, Any]]:
    """A plan of text tasks with the given dependencies (node i reads the outputs of its deps)."""
    plan = []
    for i, deps in enumerate(deps_by_node):
        text = f"Summarize {chain_refs(deps)}" if deps else f"Source text number {i} to summarize."
        plan.append({"task": TASK, "id": i, "dep": sorted(deps) or [-1], "args": {"text": text}})
    return plan


def critical_path_length(deps_by_node: list[list[int]]) -> int:
    """Nodes on the longest dependency chain."""
    depth: dict[int, int] = {}
    for i, deps in enumerate(deps_by_node):
        depth[i] = 1 + max((depth[d] for d in deps), default=0)
    return max(depth.values(), default=0)


class _Args(BaseModel):
    text: str = Field(description="The text to summarize.")


def timed_tools(latency_s: float = 0.0) -> list[StructuredTool]:
    """The summarization tool, taking ``latency_s`` (asyncio sleep, so parallel calls overlap)."""
    counter = iter(range(1, 10**9))

    def run(text: str) -> dict[str, Any]:
        if latency_s:
            time.sleep(latency_s)
        return {"text": f"(summary {next(counter)} of {len(text)} characters)"}

    async def arun(text: str) -> dict[str, Any]:
        if latency_s:
            await asyncio.sleep(latency_s)
        return {"text": f"(summary {next(counter)} of {len(text)} characters)"}

    return [StructuredTool(name=TASK, description="Summarize a text.", args_schema=_Args, func=run,
                           coroutine=arun)]


class StubLLM(BaseChatModel):
    """A scripted controller with a set latency that plays each agent's protocol (see module doc)."""

    plan: list[dict[str, Any]] = Field(default_factory=list)
    per_call_s: float = 0.0
    per_token_s: float = 0.0
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "benchmark-stub"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "StubLLM":
        return self

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content) if messages else ""
        if "planner" in system:
            return AIMessage(json.dumps(self.plan))
        if "step by step" in system:  # ReAct: one action per turn, in plan order
            done = sum(isinstance(m, AIMessage) for m in messages)  # one earlier turn per action taken
            if done < len(self.plan):
                step = self.plan[done]
                args = {"text": re.sub(r"<resource>-(\d+)", r"(output \1)", step["args"]["text"])}
                return AIMessage(f"Thought: next task\nAction: {step['task']}\nAction Input: {json.dumps(args)}")
            return AIMessage("Thought: all done\nFinal Answer: done")
        if any(isinstance(m, ToolMessage) for m in messages) or any(getattr(m, "tool_calls", None) for m in messages):
            return self._next_tool_calls(messages)
        if "response" in system.lower() or "predictions" in system.lower():
            return AIMessage("Done: every task ran.")
        return self._next_tool_calls(messages)

    def _next_tool_calls(self, messages: list[BaseMessage]) -> AIMessage:
        """Function calling: all tasks whose dependencies already ran, as parallel tool calls."""
        called = sum(len(getattr(m, "tool_calls", None) or []) for m in messages if isinstance(m, AIMessage))
        ready_upto = called
        finished = set(range(called))
        batch = []
        for step in self.plan[ready_upto:]:
            deps = [d for d in step["dep"] if d >= 0]
            if all(d in finished for d in deps):
                batch.append(step)
            else:
                break
        if not batch:
            return AIMessage("Done: every task ran.")
        calls = [{"name": s["task"], "args": {"text": s["args"]["text"].replace("<resource>", "output")},
                  "id": f"call-{s['id']}", "type": "tool_call"} for s in batch]
        return AIMessage("", tool_calls=calls)

    def _reply(self, messages: list[BaseMessage]) -> tuple[AIMessage, float]:
        self.calls += 1
        message = self._answer(messages)
        text = str(message.content) + json.dumps(message.tool_calls or [])
        tokens = max(1, len(text) // 4)
        prompt_tokens = sum(len(str(m.content)) for m in messages) // 4
        usage = {"input_tokens": prompt_tokens, "output_tokens": tokens, "total_tokens": prompt_tokens + tokens}
        return message.model_copy(update={"usage_metadata": usage}), self.per_call_s + self.per_token_s * tokens

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        message, delay = self._reply(messages)
        time.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        message, delay = self._reply(messages)
        await asyncio.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=message)])


def cpu_name() -> str:
    """The CPU's model name (figures always name it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def summarize(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "mean": statistics.fmean(values), "min": min(values),
            "max": max(values), "n": len(values)}


#: Where a ``--quick`` run writes its JSON: apart from the real results, which it must not replace.
QUICK_RESULTS = RESULTS / "quick"


def result_path(name: str, quick: bool = False, folder: Path = RESULTS) -> Path:
    """The JSON file of benchmark ``name``: in ``folder``, or in ``QUICK_RESULTS`` for a quick run."""
    return (QUICK_RESULTS if quick else folder) / f"{name}.json"


def write_result(name: str, data: dict[str, Any], *, quick: bool = False, folder: Path = RESULTS) -> Path:
    """``data`` as benchmark ``name``'s JSON (``result_path``), with ``"quick": true`` for a quick run."""
    path = result_path(name, quick, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**data, "quick": True} if quick else data, indent=2) + "\n", encoding="utf-8")
    return path


def quick_parser(description: str) -> argparse.ArgumentParser:
    """A benchmark's argument parser with ``--quick``: a run of seconds that checks the script still
    works end to end (CI runs every benchmark so, ``tests/test_benchmarks.py``); its figures mean nothing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="a few seconds' run that only checks the script works (results/quick/, figures meaningless)")
    return parser


def print_table(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row])
    Console().print(table)
