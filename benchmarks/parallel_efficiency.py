"""Parallel efficiency of the global-plan scheduler on the DAG shapes of the TaskBench sample:
tools with a fixed latency, wall time of the execution stage over the critical-path time
(target: <= 1.05, i.e. independent tasks really run at the same time and nothing waits on polling).

    python benchmarks/parallel_efficiency.py [TASKBENCH_DIR] [--quick]

``--quick``: two shapes, tools of 10 ms (checks the script, measures nothing).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from _stubs import StubLLM, critical_path_length, print_table, quick_parser, summarize, text_plan, timed_tools, write_result

from tests.shared import shared_path

TOOL_LATENCY_S = 0.2
TARGET = 1.05
DATA = shared_path("taskbench")


def dataset_shapes(data_dir: Path) -> list[list[list[int]]]:
    """Distinct dependency shapes (deps per node, from ``<node-j>`` references) of the dag samples."""
    from hugginggpt.eval import TaskBenchMapping, load_taskbench

    dataset = load_taskbench(data_dir)
    mapping = TaskBenchMapping(dataset.tools)
    shapes = []
    for sample in dataset.select(types=["dag"]):
        deps = [[d for d in step["dep"] if d >= 0] for step in mapping.sample_to_plan(sample.nodes)]
        if _acyclic(deps) and deps not in shapes:
            shapes.append(deps)
    return shapes


def _acyclic(deps: list[list[int]]) -> bool:
    """TaskBench data has some forward references; keep shapes whose deps all point backwards."""
    return all(d < i for i, ds in enumerate(deps) for d in ds)


async def execution_seconds(deps: list[list[int]], root: str, latency_s: float = TOOL_LATENCY_S) -> float:
    from hugginggpt.agent import GlobalPlanAgent

    agent = GlobalPlanAgent(StubLLM(plan=text_plan(deps)), tools=timed_tools(latency_s),
                            workspace_root=root, max_concurrency=len(deps))
    output = await agent.ainvoke("Run the plan.")
    assert all(r["status"] == "ok" for r in output["results"].values()), output["results"]
    return json.loads(Path(output["trace"]).read_text())["timings"]["execution"]


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA, help="the TaskBench folder")
    args = parser.parse_args(argv)
    latency = 0.01 if args.quick else TOOL_LATENCY_S
    shapes = dataset_shapes(args.data)[: 2 if args.quick else None]
    rows, ratios, records = [], [], []
    with tempfile.TemporaryDirectory() as root:
        for deps in shapes:
            wall = asyncio.run(execution_seconds(deps, root, latency))
            ideal = critical_path_length(deps) * latency
            ratios.append(wall / ideal)
            records.append({"deps": deps, "wall_s": wall, "critical_path_s": ideal, "ratio": wall / ideal})
            rows.append([len(deps), critical_path_length(deps), wall, ideal, wall / ideal])
    stats = summarize(ratios)
    print_table(f"Execution wall time over critical path ({latency}s per tool)",
                ["tasks", "critical path", "wall s", "ideal s", "ratio"], rows)
    met = stats["max"] <= TARGET
    print(f"{len(shapes)} DAG shapes; ratio median {stats['median']:.3f}, max {stats['max']:.3f}; "
          f"target <= {TARGET}: {'met' if met else 'NOT met'}")
    path = write_result("parallel_efficiency", {"tool_latency_s": latency, "ratio": stats, "target": TARGET,
                                                "target_met": met, "shapes": records}, quick=args.quick)
    print(f"written {path}")


if __name__ == "__main__":
    main()
