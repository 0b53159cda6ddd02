"""`hugginggpt serve` under load: requests per minute and latency percentiles over real HTTP.

    python benchmarks/server_load.py                      # scripted controller, local tools, 100 concurrent
    python benchmarks/server_load.py --quick              # seconds: the same, 10 concurrent
    python benchmarks/server_load.py --gguf $(../shared/models/fetch-gguf qwen2.5-coder-1.5b) -n 6 -c 2

Scripted (default): one in-process uvicorn server whose controller plans from the request itself
(``tests/server/live.py``) and whose tools are the agent tests' deterministic ones; ``-n`` runs with
an uploaded image each (POST /runs + SSE) are sent at once. Reports requests/min, p50/p95/max
latency, and the process's resident memory before and after.

``--gguf``: `hugginggpt serve --llm gguf:PATH` in its own process; ``-n`` JARVIS ``POST /tasks``
requests (planning and model selection) at concurrency ``-c``. Also times the same request as a
cold CLI-style process (import, model load, plan) to show what the warm server saves.

Writes ``benchmarks/results/server_load_<mode>.json``. ``--quick``: the scripted mode with 10 runs
(checks the script, measures nothing).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _stubs import ROOT, quick_parser, write_result

#: Unseen by the wave and by each other (no cached state of either request): one for the warm server
#: alone, one for a cold process; the same shape of plan.
FRESH = ["Describe the picture harbour.png and read that description out loud",
         "Tell me what the photo garden.jpg shows, and say it aloud as speech"]
REQUESTS = ["Describe the image example.jpg, then read the description aloud",
            "Translate 'good morning' to French and read it aloud",
            "Summarize this text and answer: what is the capital of France? Paris is the capital of France."]


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]  # noqa: E731
    return {"p50": statistics.median(ordered), "p95": pick(0.95), "max": ordered[-1]}


async def scripted_run(client: httpx.AsyncClient, i: int, image: bytes) -> float:
    started = time.perf_counter()
    response = await client.post("/runs", data={"input": f"Describe picture {i} and read it aloud"},
                                 files={"files": (f"img{i}.png", image, "image/png")})
    response.raise_for_status()
    async with client.stream("GET", f"/runs/{response.json()['id']}/events") as stream:
        last = None
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                last = json.loads(line[6:])
    assert last == {"event": "end", "status": "done", "error": None}, last
    return time.perf_counter() - started


def scripted(n: int) -> dict:
    import io

    from PIL import Image

    from hugginggpt.agent import GlobalPlanAgent
    from hugginggpt.server import ServerSettings, create_app
    from hugginggpt.server.agents import AgentPool
    from tests.agent.conftest import Card, Recorder, catalog_of, make_tools
    from tests.server.live import LiveServer, RequestEchoLLM, rss_mib

    tools = make_tools(Recorder())
    catalog = catalog_of([Card("org/cap", "image-to-text", 3), Card("org/tts", "text-to-speech", 4)])
    agent = GlobalPlanAgent(RequestEchoLLM(), [tools["image-to-text"], tools["text-to-speech"]], catalog)
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buffer, format="PNG")
    with tempfile.TemporaryDirectory() as runs_dir:
        settings = ServerSettings(runs_dir=Path(runs_dir), max_active=8, max_queued=4 * n)
        with LiveServer(create_app(settings, AgentPool({"global": agent}))) as server:
            before = rss_mib()

            async def wave() -> list[float]:
                limits = httpx.Limits(max_connections=2 * n, max_keepalive_connections=2 * n)
                async with httpx.AsyncClient(base_url=server.url, timeout=300, limits=limits) as client:
                    return await asyncio.gather(*(scripted_run(client, i, buffer.getvalue()) for i in range(n)))

            started = time.perf_counter()
            latencies = asyncio.run(wave())
            wall = time.perf_counter() - started
            after = rss_mib()
    return {"mode": "scripted", "requests": n, "wall_s": wall, "requests_per_min": 60 * n / wall,
            **{f"{k}_s": v for k, v in percentiles(latencies).items()}, "rss_before_mib": before, "rss_after_mib": after}


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("hugginggpt serve exited before answering /health")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("hugginggpt serve did not answer /health")


COLD = """
import sys, time
started = time.perf_counter()
from hugginggpt.build import make_agent, make_llm
from hugginggpt.config import load_settings
settings = load_settings(llm=sys.argv[1], execution="remote")
agent = make_agent(settings, make_llm(settings))
agent.execute = False
agent.invoke({"input": sys.argv[2]})
print(time.perf_counter() - started)
"""


def gguf(path: str, n: int, concurrency: int, port: int) -> dict:
    from tests.server.live import free_port

    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as runs_dir:
        server = subprocess.Popen([sys.executable, "-m", "hugginggpt.cli.main", "serve", "--port", str(port),
                                   "--llm", f"gguf:{path}", "--execution", "remote", "--runs-dir", runs_dir,
                                   "--max-active", str(concurrency), "--timeout", "3600", "--log-level", "warning"],
                                  env=env)
        try:
            started = time.perf_counter()
            wait_healthy(url, server)
            startup = time.perf_counter() - started

            async def one(client: httpx.AsyncClient, gate: asyncio.Semaphore, text: str) -> float:
                async with gate:
                    t0 = time.perf_counter()
                    response = await client.post("/tasks", json={"messages": [{"role": "user", "content": text}]})
                    response.raise_for_status()
                    return time.perf_counter() - t0

            async def wave() -> list[float]:
                gate = asyncio.Semaphore(concurrency)
                async with httpx.AsyncClient(base_url=url, timeout=1800) as client:
                    return await asyncio.gather(*(one(client, gate, REQUESTS[i % len(REQUESTS)]) for i in range(n)))

            t0 = time.perf_counter()
            latencies = asyncio.run(wave())
            wall = time.perf_counter() - t0
            t0 = time.perf_counter()  # a new request, alone on the warm server
            httpx.post(url + "/tasks", json={"messages": [{"role": "user", "content": FRESH[0]}]},
                       timeout=1800).raise_for_status()
            warm_single = time.perf_counter() - t0
        finally:
            server.terminate()
            server.wait(timeout=60)
    cold = subprocess.run([sys.executable, "-c", COLD, f"gguf:{path}", FRESH[1]], capture_output=True, text=True,
                          env=env, cwd=ROOT.parent)
    cold_s = float(cold.stdout.strip().splitlines()[-1]) if cold.returncode == 0 else float("nan")
    return {"mode": "gguf", "model": Path(path).name, "requests": n, "concurrency": concurrency,
            "server_startup_s": startup, "wall_s": wall, "requests_per_min": 60 * n / wall,
            **{f"{k}_s": v for k, v in percentiles(latencies).items()},
            "warm_server_plan_s": warm_single, "cold_cli_plan_s": cold_s}


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("--gguf", metavar="PATH", help="benchmark `hugginggpt serve` with this GGUF controller")
    parser.add_argument("-n", type=int, default=None, help="requests (default 100 scripted, 6 gguf)")
    parser.add_argument("-c", "--concurrency", type=int, default=2, help="gguf: requests in flight (default 2)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:  # seconds: scripted, 10 requests
        args.gguf, args.n = None, args.n or 10
    if args.gguf:
        result = gguf(args.gguf, args.n or 6, args.concurrency, args.port)
    else:
        result = scripted(args.n or 100)
    for key, value in result.items():
        print(f"{key:>20}: {value:.2f}" if isinstance(value, float) else f"{key:>20}: {value}")
    out = write_result(f"server_load_{result['mode']}", {**result, "cpu": os.cpu_count(), "load": os.getloadavg()},
                       quick=args.quick)
    print(f"written {out}")


if __name__ == "__main__":
    main()
