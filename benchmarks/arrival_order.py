"""`hugginggpt serve` with a controller that answers one call at a time: when do 10 concurrent requests
get their answers? Time to the first and the last answer, and the first against one request alone.

    python benchmarks/arrival_order.py --quick                 # seconds: scripted model, 50 ms a call
    python benchmarks/arrival_order.py                         # scripted model, 0.5 s a call
    flock /tmp/llama.lock python benchmarks/arrival_order.py --gguf $(../shared/models/fetch-gguf smollm2-135m)

Scripted (default): the server's own stack in this process (``create_app``, uvicorn, the global-plan
agent, the agent tests' local tools) on a controller that takes a fixed time per call and, like the
embedded llama.cpp model, answers one call at a time through ``llm.fair_lock.FairLock``. ``before``:
the calls take the model in the order they come (each call made outside its run's context: what
the lock did before runs carried their arrival); ``after``: as the server runs them (the oldest
run's call first). JARVIS ``POST /hugginggpt`` requests, all sent at once, ``--max-active`` of them
running (default 4, the server's default).

``--gguf PATH``: `hugginggpt serve --llm gguf:PATH` in its own process, the code of this checkout, or
of ``--code DIR`` (another checkout: the code before a change); ``--label`` names the result.

Writes ``benchmarks/results/arrival_order-<mode>.json`` (``--quick``: under ``results/quick/``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))  # run as `python benchmarks/<name>.py` from a checkout

from benchmarks._stubs import cpu_name, write_result  # noqa: E402


async def _wave(url: str, requests: list[str], timeout: float) -> list[float]:
    """Send every request at once; the seconds until each answer, in the order the answers came."""
    started = time.perf_counter()
    done: list[float] = []

    async def one(client: httpx.AsyncClient, text: str) -> None:
        response = await client.post("/hugginggpt", json={"messages": [{"role": "user", "content": text}]})
        response.raise_for_status()
        done.append(time.perf_counter() - started)

    limits = httpx.Limits(max_connections=len(requests) + 2)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        await asyncio.gather(*(one(client, text) for text in requests))
    return sorted(done)


def _figures(alone: float, answers: list[float]) -> dict[str, Any]:
    return {"alone_s": round(alone, 3), "first_s": round(answers[0], 3), "last_s": round(answers[-1], 3),
            "first_over_alone": round(answers[0] / alone, 2), "answers_s": [round(a, 3) for a in answers]}


def scripted(n: int, per_call_s: float, max_active: int) -> dict[str, Any]:
    from hugginggpt.agent import GlobalPlanAgent
    from hugginggpt.llm.fair_lock import FairLock
    from hugginggpt.server import ServerSettings, create_app
    from hugginggpt.server.agents import AgentPool
    from tests.agent.conftest import Card, Recorder, catalog_of, make_tools
    from tests.server.live import LiveServer, RequestEchoLLM

    class OneAtATime(RequestEchoLLM):
        """``RequestEchoLLM`` taking ``per_call_s`` per call, one call at a time (as llama.cpp does)."""

        in_order_of_calls: bool = False

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            def call():
                with LOCK:
                    time.sleep(per_call_s)
                    return RequestEchoLLM._generate(self, messages, stop, run_manager, **kwargs)

            # before: every call counts as arriving when it is made (no run's arrival): first come, first served
            return contextvars.Context().run(call) if self.in_order_of_calls else call()

    results = {}
    for mode in ("before", "after"):
        LOCK = FairLock()
        llm = OneAtATime(in_order_of_calls=mode == "before")
        tools = make_tools(Recorder())
        catalog = catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)])
        agent = GlobalPlanAgent(llm, [tools["image-to-text"], tools["text-to-speech"]], catalog)
        with tempfile.TemporaryDirectory() as runs_dir:
            settings = ServerSettings(runs_dir=Path(runs_dir), max_active=max_active, max_queued=4 * n)
            with LiveServer(create_app(settings, AgentPool({"global": agent}), warm_default=False)) as server:
                requests = [f"Describe /tmp/picture{i}.png and read it aloud" for i in range(n)]
                asyncio.run(_wave(server.url, ["Describe /tmp/warm.png and read it aloud"], 600))  # first-call costs
                alone = asyncio.run(_wave(server.url, ["Describe /tmp/alone.png and read it aloud"], 600))[0]
                results[mode] = _figures(alone, asyncio.run(_wave(server.url, requests, 600)))
        results[mode]["llm_calls"] = len(llm.calls)
    return {"mode": "scripted", "requests": n, "per_call_s": per_call_s, "max_active": max_active, **results}


REQUESTS = ["Describe the image example.jpg, then read the description aloud",
            "Translate 'good morning' to French and read it aloud",
            "Summarize this text: Paris is the capital of France.",
            "Generate an image of a cat on a sofa",
            "What objects are in photo.png?"]


def gguf(path: str, n: int, max_active: int, code: Path, port: int) -> dict[str, Any]:
    from tests.server.live import free_port

    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    with tempfile.TemporaryDirectory() as runs_dir:
        server = subprocess.Popen([sys.executable, "-m", "hugginggpt.cli.main", "serve", "--port", str(port),
                                   "--llm", f"gguf:{path}", "--execution", "remote", "--runs-dir", runs_dir,
                                   "--max-active", str(max_active), "--max-queued", str(4 * n), "--timeout", "3600",
                                   "--log-level", "warning"], env=env, cwd=code)
        try:
            deadline = time.monotonic() + 900
            while True:
                if server.poll() is not None:
                    raise SystemExit("hugginggpt serve exited before answering /health")
                try:
                    if httpx.get(url + "/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("hugginggpt serve did not answer /health")
                time.sleep(0.5)
            asyncio.run(_wave(url, ["Say hello"], 1800))  # the prompt read ahead, warm
            alone = asyncio.run(_wave(url, [REQUESTS[0] + " (alone)"], 1800))[0]
            answers = asyncio.run(_wave(url, [f"{REQUESTS[i % len(REQUESTS)]} (request {i})" for i in range(n)], 3600))
        finally:
            server.terminate()
            server.wait(timeout=60)
    return {"mode": "gguf", "model": Path(path).name, "requests": n, "max_active": max_active,
            "code": str(code), **_figures(alone, answers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", metavar="PATH", help="`hugginggpt serve` with this GGUF controller")
    parser.add_argument("--code", type=Path, default=ROOT.parent, help="--gguf: the checkout whose server runs")
    parser.add_argument("--label", default="", help="a name for the result file (e.g. before, after)")
    parser.add_argument("-n", type=int, default=10, help="concurrent requests (default 10)")
    parser.add_argument("--max-active", type=int, default=4, help="runs at once (default 4, the server's default)")
    parser.add_argument("--per-call", type=float, default=0.5, help="scripted: seconds per LLM call (default 0.5)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="seconds: scripted, 50 ms a call")
    args = parser.parse_args()
    max_active = args.max_active
    if args.gguf:
        result = gguf(args.gguf, args.n, max_active, args.code.resolve(), args.port)
    else:
        result = scripted(args.n, 0.05 if args.quick else args.per_call, max_active)
    result.update(cpu=f"{cpu_name()}, {os.cpu_count()} cores", load=os.getloadavg())
    print(json.dumps(result, indent=2))
    name = "-".join(filter(None, ["arrival_order", result["mode"], args.label]))
    print(f"written {write_result(name, result, quick=args.quick)}")


if __name__ == "__main__":
    main()
