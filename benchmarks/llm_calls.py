"""LLM calls per request by number of tasks, for the three agents (target: global-plan <= 3).

Counted through LangChain callbacks (``UsageCounter``) with an instant LLM stub that plays each
agent's protocol perfectly, so the counts are the agents' own minimum, not a model's mistakes.

    python benchmarks/llm_calls.py [--quick]

``--quick``: plans of 1 and 2 tasks only.
"""

from __future__ import annotations

import tempfile

from _stubs import print_table, quick_parser, write_result
from agent_latency import AGENTS, run_once

SIZES = (1, 2, 3, 5, 8)
TARGET = 3


def shapes(n: int) -> dict[str, list[list[int]]]:
    return {"chain": [[i - 1] if i else [] for i in range(n)], "independent": [[] for _ in range(n)]}


def main(argv: list[str] | None = None) -> None:
    args = quick_parser(__doc__.splitlines()[0]).parse_args(argv)
    rows, data = [], {}
    with tempfile.TemporaryDirectory() as root:
        for n in SIZES[:2] if args.quick else SIZES:
            for shape, deps in shapes(n).items():
                counts = {name: run_once(name, deps, root, per_call_s=0.0, per_token_s=0.0) for name in AGENTS}
                data[f"{shape} of {n}"] = counts
                rows.append([n, shape, *(counts[name]["llm_calls"] for name in AGENTS)])
    print_table("LLM calls per request", ["tasks", "shape", *AGENTS], rows)
    met = all(v["global"]["llm_calls"] <= TARGET for v in data.values())
    print(f"target global-plan <= {TARGET} calls: {'met' if met else 'NOT met'}")
    path = write_result("llm_calls", {"by_graph": data, "target": TARGET, "target_met": met}, quick=args.quick)
    print(f"written {path}")


if __name__ == "__main__":
    main()
