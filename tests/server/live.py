"""What the server tests and benchmarks/server_load.py share: a controller LLM that plans from the
request itself, and a real uvicorn server in a thread of this process."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

import uvicorn
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from hugginggpt.server.connections import Deadlines, Listener, uvicorn_config

_IMAGE = re.compile(r"(/[^\s,()\"'\]]+\.(?:png|jpg|jpeg))")


class RequestEchoLLM(BaseChatModel):
    """A controller that plans from the request it is given and answers with what it is shown, for
    all three agents at once (a server shares one controller): "slow N" gets a sleep task of N
    seconds, a request naming an image [image-to-text, text-to-speech on its caption], anything else
    an empty plan (``plan_for``). The global agent's stages are told apart by the tag it gives each
    LLM call (``plan``, ``response``); the tool-loop agents get the same plan one step per turn,
    through ReAct's text protocol (``stop`` at an observation) or as native tool calls (tools bound),
    and answer once every step has an observation. ``calls`` records each call's request and protocol."""

    delay_s: float = 0.0
    calls: list[tuple[str, str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "request-echo"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tool_names=[t.name for t in tools])

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("free text only: the stages read the plan out of the answer")

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        tags = set(run_manager.tags if run_manager else ())
        if self.delay_s:
            time.sleep(self.delay_s)
        if "tool_names" in kwargs:
            protocol, request, message = "tools", *self._tool_call_turn(messages)
        elif stop and any("Observation:" in s for s in stop):
            protocol, request, message = "react", *self._react_turn(messages)
        elif "plan" in tags:
            protocol, request = "plan", str(messages[-1].content)
            message = AIMessage(json.dumps(plan_for(request)))
        else:
            protocol, request = "response", str(messages[-1].content)
            predictions = [line.strip() for line in request.splitlines() if "prediction" in line or "/outputs/" in line]
            message = AIMessage("Answer: " + (" | ".join(predictions) if predictions else "nothing to do"))
        self.calls.append((request, protocol))
        usage = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
        return ChatResult(generations=[ChatGeneration(message=message.model_copy(update={"usage_metadata": usage}))])

    def _stream(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any):
        """The answer of ``_generate`` as a model streams it: the response stage's text word by word
        (usage on the last chunk), any other answer in one chunk."""
        message = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        calls = [tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                 for i, c in enumerate(message.tool_calls)]
        words = re.findall(r"\S+\s*", message.content) if not calls and message.content else [message.content]
        for i, word in enumerate(words):
            last = i == len(words) - 1
            chunk = AIMessageChunk(content=word, tool_call_chunks=calls if last else [],
                                   usage_metadata=message.usage_metadata if last else None)
            if run_manager:
                run_manager.on_llm_new_token(word, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)

    @staticmethod
    def _react_turn(messages: list[BaseMessage]) -> tuple[str, AIMessage]:
        humans = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        observations = [h.removeprefix("Observation:").strip() for h in humans if h.startswith("Observation:")]
        request = next(h for h in reversed(humans) if not h.startswith("Observation:"))
        plan = plan_for(request)
        if len(observations) < len(plan):
            step = plan[len(observations)]
            return request, AIMessage(f"Thought: step {step['id']}\nAction: {step['task']}\n"
                                      f"Action Input: {json.dumps(step['args'])}")
        return request, AIMessage("Final Answer: Answer: " + (" | ".join(observations) or "nothing to do"))

    @staticmethod
    def _tool_call_turn(messages: list[BaseMessage]) -> tuple[str, AIMessage]:
        request = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
        observations = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        plan = plan_for(request)
        if len(observations) < len(plan):
            step = plan[len(observations)]
            call = {"name": step["task"], "args": step["args"], "id": f"call-{step['id']}", "type": "tool_call"}
            return request, AIMessage("", tool_calls=[call])
        return request, AIMessage("Answer: " + (" | ".join(observations) or "nothing to do"))


def plan_for(request: str) -> list[dict[str, Any]]:
    """The plan a request asks for: "slow N" -> a sleep task of N seconds ("slow N in a thread":
    ``nap``, a sync tool that blocks a thread), then, when the request says "aloud", reading its result
    aloud; else an image path -> its caption, then reading the caption aloud; else no tasks."""
    slow = re.search(r"\bslow (\d+(?:\.\d+)?)( in a thread)?", request)
    images = _IMAGE.findall(request)
    if slow:
        first = {"task": "nap" if slow.group(2) else "sleep", "id": 0, "dep": [-1],
                 "args": {"seconds": float(slow.group(1))}}
    elif images:
        first = {"step": "describe the picture", "task": "image-to-text", "id": 0, "dep": [-1],
                 "args": {"image": images[-1]}}
    else:
        return []
    if "aloud" in request or not slow:
        return [first, {"step": "read it aloud", "task": "text-to-speech", "id": 1, "dep": [0],
                        "args": {"text": "<resource>-0"}}]
    return [first]


def rss_mib() -> float:
    """This process's resident memory in MiB (Linux), NaN where /proc is missing."""
    try:
        for line in open("/proc/self/status").read().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def spawned_server(name: str, command: list[str], probe: str, ready: Callable[[httpx.Response], bool], *,
                   log_path: Path, seconds: float, env: dict[str, str], cwd: Path,
                   poll_s: float = 0.5) -> Iterator[subprocess.Popen]:
    """``command`` (the server ``name``) in a process of its own, its output in ``log_path``, until
    ``ready`` accepts its answer to a GET of ``probe``; stopped when the block ends. The test fails, with
    the end of the log, when the process exits first or ``seconds`` pass."""
    import pytest

    with log_path.open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            deadline = time.monotonic() + seconds
            while True:
                if process.poll() is not None:
                    pytest.fail(f"{name} exited: {log_path.read_text()[-2000:]}")
                try:
                    if ready(httpx.get(probe, timeout=2)):
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} did not answer {probe} within {seconds:g} s")
                time.sleep(poll_s)
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


class LiveServer:
    """uvicorn serving ``app`` in a thread of this process, as ``hugginggpt serve`` does (its protocol,
    deadlines and stop); ``url`` is its base URL. ``port``: a given one (default: a free one)."""

    def __init__(self, app: Any, port: int | None = None):
        self.app = app
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = getattr(app.state, "settings", None)
        deadlines = Deadlines() if settings is None else Deadlines(
            settings.header_timeout_s, settings.body_timeout_s, settings.min_body_bytes_per_s)
        config = uvicorn_config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on",
                                timeout_keep_alive=60, deadlines=deadlines)
        from hugginggpt.server.app import stop

        self.server = Listener(config, on_stop=lambda: stop(app))
        self.thread = threading.Thread(target=self.server.run, name="test-uvicorn", daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
