"""`hugginggpt compare --concurrency N` against a served model: throughput, memory and identical predictions.

    python benchmarks/compare_concurrency.py                 # 100 requests x global,react,tools at N = 1, 8, 32
    python benchmarks/compare_concurrency.py --quick         # seconds: 6 requests, 50 ms a call, N = 1, 4

The served model is the OpenAI-compatible stand-in of the tests (``tests/openai_server.py``) in its own
process: it answers each call after ``--latency`` seconds with at most ``--slots`` calls answered at
once (the rest wait their turn), and answers every agent as a model that knows the TaskBench request's
gold plan would (so the agents make their real number of calls). Each N runs in a fresh process
(``--child``) with the controller ``openai:stand-in --base-url URL``, one agent after another, as
``compare`` does: wall and CPU seconds per agent, peak resident memory of the process, and the
predictions (plans and TaskBench rows, timings left out) checked identical to N = 1.

Goal (issue 32): throughput >= 0.8 x N of the sequential run, up to the stand-in's slots; memory flat;
identical predictions. Writes ``benchmarks/results/compare_concurrency.json`` (``--quick``: under ``results/quick/``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))  # run as `python benchmarks/<name>.py` from a checkout

from benchmarks._stubs import cpu_name, write_result  # noqa: E402
from tests.shared import shared_path  # noqa: E402

AGENTS = ("global", "react", "tools")


def requests_and_plans(count: int) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    """The first ``count`` TaskBench requests (seed 0) and each one's gold plan in the planner's terms."""
    from hugginggpt.eval.mapping import TaskBenchMapping
    from hugginggpt.eval.taskbench import load_taskbench

    dataset = load_taskbench(data_dir())
    mapping = TaskBenchMapping(dataset.tools)
    samples = dataset.select(seed=0)[:count]
    return [s.id for s in samples], {s.request: mapping.sample_to_plan(s.nodes) for s in samples}


def data_dir() -> Path:
    folder = shared_path("taskbench")
    if not (folder / "data.json").is_file():
        sys.exit(f"the TaskBench sample is not at {folder} (set HUGGINGGPT_SHARED)")
    return folder


def serve(plans: dict[str, Any], latency: float, slots: int, url: Any, stop: Any, stats: Any) -> None:
    """The stand-in in this (child) process until ``stop`` is set; its base URL and then its stats back."""
    from tests.openai_server import OpenAIServer

    with OpenAIServer(plans=plans, latency=latency, slots=slots) as server:
        url.put(server.url)
        stop.wait()
        stats.put({"calls": len(server.requests), "peak": server.peak})


def child(args: argparse.Namespace) -> None:
    """One N: every agent on the requests, one after another; prints the figures as JSON."""
    import asyncio

    from hugginggpt.eval.compare import Comparison
    from hugginggpt.eval.taskbench import load_taskbench
    from hugginggpt.llm import load_llm

    dataset = load_taskbench(data_dir())
    wanted = json.loads(args.ids)
    samples = [dataset.get(i) for i in wanted]
    llm = load_llm("openai:stand-in", base_url=args.url)
    figures = {}
    for agent in args.agents.split(","):
        comparison = Comparison(dataset, llm, Path(args.out), agents=[agent], concurrency=args.n, resamples=0)
        wall, cpu = time.perf_counter(), time.process_time()
        asyncio.run(comparison.arun(samples))
        report = comparison.reports[agent]
        figures[agent] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                          "requests": len(report.rows), "failures": report.failures,
                          "llm_calls": sum(r["harness"].get("llm_calls") or 0 for r in report.rows),
                          "median_request_s": report.summary()["median_seconds"]}
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"agents": figures, "peak_rss_mib": round(peak_kib / 1024, 1)}))


def predictions(out: Path, agent: str) -> list[dict[str, Any]]:
    """The rows of an agent's predictions without their timings: what must not depend on N."""
    rows = []
    for line in (out / "predictions" / f"{agent}.json").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        harness = row.get("harness") or {}
        rows.append({"id": row["id"], "result": row["result"], "plan": harness.get("plan"),
                     "error": harness.get("error"), "llm_calls": harness.get("llm_calls")})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds: 6 requests, 50 ms a call, N = 1, 4")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the stand-in takes per call")
    parser.add_argument("--slots", type=int, default=8, help="calls the stand-in answers at once")
    parser.add_argument("--concurrency", default="1,8,32", help="the values of N, comma-separated (1 first)")
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.quick:
        args.requests, args.latency, args.concurrency = 6, 0.05, "1,4"
    levels = [int(n) for n in args.concurrency.split(",")]
    ids, plans = requests_and_plans(args.requests)
    context = multiprocessing.get_context("spawn")
    url, stats, stop = context.Queue(), context.Queue(), context.Event()
    server = context.Process(target=serve, args=(plans, args.latency, args.slots, url, stop, stats), daemon=True)
    server.start()
    base_url = url.get(timeout=120)
    runs: dict[int, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in levels:
                out = Path(tmp) / f"n{n}"
                done = subprocess.run([sys.executable, __file__, "--child", "--url", base_url, "--n", str(n),
                                       "--ids", json.dumps(ids), "--out", str(out), "--agents", args.agents],
                                      capture_output=True, text=True, check=False,
                                      env={**os.environ, "OPENAI_API_KEY": "unused"})
                if done.returncode != 0:
                    sys.exit(f"N={n} failed:\n{done.stderr[-3000:]}")
                runs[n] = json.loads(done.stdout.strip().splitlines()[-1])
                runs[n]["predictions"] = {a: predictions(out, a) for a in args.agents.split(",")}
    finally:
        stop.set()
        server_stats = stats.get(timeout=30)
        server.join(timeout=30)
    report(args, levels, runs, server_stats)


def report(args: argparse.Namespace, levels: list[int], runs: dict[int, Any], server_stats: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    base = runs[levels[0]]
    agents = args.agents.split(",")
    rows = []
    for n in levels:
        run = runs[n]
        for agent in [*agents, "all"]:
            figures = run["agents"].get(agent)
            wall = sum(run["agents"][a]["wall_s"] for a in agents) if figures is None else figures["wall_s"]
            base_wall = sum(base["agents"][a]["wall_s"] for a in agents) if figures is None else \
                base["agents"][agent]["wall_s"]
            requests = len(agents) * args.requests if figures is None else figures["requests"]
            identical = all(run["predictions"][a] == base["predictions"][a] for a in agents) if figures is None \
                else run["predictions"][agent] == base["predictions"][agent]
            speedup = base_wall / wall
            rows.append({"n": n, "agent": agent, "wall_s": round(wall, 2), "requests_per_min": round(requests * 60 / wall, 1),
                         "speedup": round(speedup, 2), "goal": round(0.8 * min(n, args.slots), 2),
                         "met": speedup >= 0.8 * min(n, args.slots), "identical_to_n1": identical,
                         "cpu_s": None if figures is None else round(figures["cpu_s"], 2),
                         "failures": None if figures is None else figures["failures"],
                         "llm_calls": None if figures is None else figures["llm_calls"],
                         "median_request_s": None if figures is None else round(figures["median_request_s"], 3),
                         "peak_rss_mib": run["peak_rss_mib"]})
    table = Table(title=f"compare --concurrency N: {args.requests} requests, stand-in {args.latency * 1000:.0f} ms "
                        f"a call, {args.slots} slots ({cpu_name()}, {os.cpu_count()} CPUs)")
    for column in rows[0]:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*[str(v) for v in row.values()])
    Console(width=200).print(table)
    path = write_result("compare_concurrency", {
        "cpu": cpu_name(), "cpus": os.cpu_count(), "requests": args.requests, "latency_s": args.latency,
        "slots": args.slots, "agents": agents, "data": "TaskBench sample (../shared/taskbench), seed 0, first requests",
        "server": server_stats, "rows": rows}, quick=args.quick)
    print(f"wrote {path}")
    if not all(row["identical_to_n1"] for row in rows):
        sys.exit("predictions differ from N = 1")


if __name__ == "__main__":
    main()
