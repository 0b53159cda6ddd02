"""What the server tests and benchmarks/server_load.py share: a controller LLM that plans from the
request itself, and a real uvicorn server in a thread of this process."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from typing import Any

import uvicorn
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

_IMAGE = re.compile(r"(/[^\s,()\"'\]]+\.(?:png|jpg|jpeg))")


class RequestEchoLLM(BaseChatModel):
    """A controller that plans from the request it is given and answers with the predictions it is
    shown: a request naming an image gets [image-to-text, text-to-speech on its caption]; "slow N"
    gets a sleep task of N seconds; anything else an empty plan. Stages are told apart by the tag the
    agent gives each LLM call (``plan``, ``response``)."""

    delay_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "request-echo"

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        tags = set(run_manager.tags if run_manager else ())
        request = str(messages[-1].content)
        if self.delay_s:
            time.sleep(self.delay_s)
        if "plan" in tags:
            slow = re.search(r"\bslow (\d+(?:\.\d+)?)", request)
            images = _IMAGE.findall(request)
            if slow:
                plan = [{"task": "sleep", "id": 0, "dep": [-1], "args": {"seconds": float(slow.group(1))}}]
            elif images:
                plan = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": images[-1]}},
                        {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<resource>-0"}}]
            else:
                plan = []
            text = json.dumps(plan)
        else:
            predictions = [line.strip() for line in request.splitlines() if "prediction" in line or "/outputs/" in line]
            text = "Answer: " + (" | ".join(predictions) if predictions else "nothing to do")
        message = AIMessage(text, usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10})
        return ChatResult(generations=[ChatGeneration(message=message)])


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


class LiveServer:
    """uvicorn serving ``app`` in a thread of this process; ``url`` is its base URL."""

    def __init__(self, app: Any):
        self.app = app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on",
                                timeout_keep_alive=60)
        self.server = uvicorn.Server(config)
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
