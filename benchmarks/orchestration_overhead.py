"""Orchestration overhead of the global-plan agent: one request end to end with an instant LLM and
instant tools, for plans of 1, 5 and 10 tasks, the most a plan holds (target: median < 5 ms at 10 tasks).

Everything measured is the library's own work: prompt building, plan parsing and validation,
scheduling, reference substitution, events, the trace written to disk, the response stage.
Besides wall time it reports the process's CPU time per request (all threads): on a shared,
loaded machine wall time mostly measures the neighbours, CPU time the library.

    python benchmarks/orchestration_overhead.py [--repeats 30] [--quick]
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

from _stubs import StubLLM, cpu_name, print_table, quick_parser, summarize, text_plan, timed_tools, write_result

from hugginggpt.agent.plan.model import MAX_TASKS

SIZES = tuple(n for n in (1, 5, 10, 25) if n <= MAX_TASKS)  # a plan holds at most MAX_TASKS tasks
REPEATS = 30
TARGET_MS_AT_10 = 5.0


def chain_of(n: int) -> list[list[int]]:
    """Half the tasks independent, the other half each reading an earlier one: a mixed DAG."""
    return [[] if i < (n + 1) // 2 else [i - (n + 1) // 2] for i in range(n)]


async def measure(n: int, root: str, repeats: int = REPEATS) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``repeats`` requests with a plan of ``n`` tasks."""
    from hugginggpt.agent import GlobalPlanAgent

    llm = StubLLM(plan=text_plan(chain_of(n)))
    agent = GlobalPlanAgent(llm, tools=timed_tools(0.0), workspace_root=root, max_concurrency=32)
    await agent.ainvoke("warm-up request")
    times, cpu_times = [], []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        output = await agent.ainvoke("Summarize these texts.")
        times.append((time.perf_counter() - started) * 1000)
        cpu_times.append((time.process_time() - cpu_started) * 1000)
        assert len(output["plan"]) == n and all(r["status"] == "ok" for r in output["results"].values()), output
    return times, cpu_times


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"requests per plan size (default {REPEATS})")
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    rows, data = [], {}
    with tempfile.TemporaryDirectory() as root:
        for n in SIZES:
            times, cpu_times = asyncio.run(measure(n, root, repeats))
            stats = summarize(times)
            stats["cpu_median"] = summarize(cpu_times)["median"]
            data[str(n)] = stats
            rows.append([n, stats["median"], stats["mean"], stats["min"], stats["max"], stats["cpu_median"]])
    met = data["10"]["cpu_median"] < TARGET_MS_AT_10
    print_table("Global-plan orchestration overhead per request (ms)", ["tasks", "median", "mean", "min", "max", "cpu median"],
                rows)
    print(f"target CPU median < {TARGET_MS_AT_10} ms at 10 tasks: {'met' if met else 'NOT met'} "
          f"({data['10']['cpu_median']:.2f} ms CPU, {data['10']['median']:.2f} ms wall; {cpu_name()}, "
          f"load average {os.getloadavg()[0]:.1f})")
    path = write_result("orchestration_overhead", {"unit": "ms", "repeats": repeats, "by_tasks": data,
                                                   "cpu": cpu_name(), "load_average": os.getloadavg(),
                                                   "target_ms_at_10": TARGET_MS_AT_10, "target_met": met},
                        quick=args.quick)
    print(f"written {path}")


if __name__ == "__main__":
    main()
