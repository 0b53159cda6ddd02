"""End-to-end latency of the three agents with an LLM stub of fixed latency per call and per output
token and tools of fixed latency (target: global-plan >= 2x faster than ReAct on graphs with >= 3
independent tasks). Also records LLM calls and tokens per request (see llm_calls.py).

    python benchmarks/agent_latency.py [--quick]

``--quick``: two graphs with no latency (checks the script, measures nothing).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from typing import Any

from _stubs import StubLLM, print_table, quick_parser, text_plan, timed_tools, write_result

PER_CALL_S = 0.3
PER_TOKEN_S = 0.002
TOOL_LATENCY_S = 0.3
TARGET_SPEEDUP = 2.0

# name -> deps per node
GRAPHS: dict[str, list[list[int]]] = {
    "1 task": [[]],
    "chain of 3": [[], [0], [1]],
    "3 independent": [[], [], []],
    "4 independent + merge": [[], [], [], [], [0, 1, 2, 3]],
    "6 independent": [[]] * 6,
}
AGENTS = ("global", "react", "tools")


def independent_tasks(deps: list[list[int]]) -> int:
    return sum(1 for d in deps if not d)


def make_agent(name: str, llm: StubLLM, root: str, tool_latency_s: float = TOOL_LATENCY_S) -> Any:
    from hugginggpt.agent import FunctionCallingAgent, GlobalPlanAgent, ReActAgent

    tools = timed_tools(tool_latency_s)
    if name == "global":
        return GlobalPlanAgent(llm, tools=tools, workspace_root=root, max_concurrency=8)
    cls = ReActAgent if name == "react" else FunctionCallingAgent
    return cls(llm, tools=tools, workspace_root=root, max_steps=20, max_llm_calls=20)


def run_once(name: str, deps: list[list[int]], root: str, per_call_s: float = PER_CALL_S,
             per_token_s: float = PER_TOKEN_S, tool_latency_s: float = TOOL_LATENCY_S) -> dict[str, Any]:
    """One request: wall seconds, LLM calls and tokens (from the callbacks), tasks run."""
    from hugginggpt.agent.trace import UsageCounter

    llm = StubLLM(plan=text_plan(deps), per_call_s=per_call_s, per_token_s=per_token_s)
    agent = make_agent(name, llm, root, tool_latency_s)
    usage = UsageCounter()
    started = time.perf_counter()
    output = asyncio.run(agent.ainvoke({"input": "Summarize the texts.", "chat_history": []},
                                       config={"callbacks": [usage]}))
    seconds = time.perf_counter() - started
    ok = sum(1 for r in output["results"].values() if r["status"] == "ok")
    return {"seconds": seconds, "tasks_ok": ok, **usage.as_dict()}


def main(argv: list[str] | None = None) -> None:
    args = quick_parser(__doc__.splitlines()[0]).parse_args(argv)
    latency = (0.0, 0.0, 0.0) if args.quick else (PER_CALL_S, PER_TOKEN_S, TOOL_LATENCY_S)
    graphs = dict(list(GRAPHS.items())[1:3]) if args.quick else GRAPHS
    rows, data = [], {}
    with tempfile.TemporaryDirectory() as root:
        for graph, deps in graphs.items():
            data[graph] = {name: run_once(name, deps, root, *latency) for name in AGENTS}
            r = data[graph]
            speedup = r["react"]["seconds"] / max(r["global"]["seconds"], 1e-9)
            data[graph]["speedup_global_vs_react"] = speedup
            rows.append([graph, r["global"]["seconds"], r["react"]["seconds"], r["tools"]["seconds"], speedup])
    print_table(f"End-to-end seconds per request (LLM {PER_CALL_S}s/call + {PER_TOKEN_S}s/token, "
                f"tools {TOOL_LATENCY_S}s)", ["graph", "global", "react", "tools", "react/global"], rows)
    wide = [g for g, deps in graphs.items() if independent_tasks(deps) >= 3]
    met = all(data[g]["speedup_global_vs_react"] >= TARGET_SPEEDUP for g in wide)
    print(f"target global >= {TARGET_SPEEDUP}x faster than ReAct with >= 3 independent tasks: "
          f"{'met' if met else 'NOT met'}")
    path = write_result("agent_latency", {"per_call_s": latency[0], "per_token_s": latency[1],
                                          "tool_latency_s": latency[2], "graphs": data,
                                          "target_speedup": TARGET_SPEEDUP, "target_met": met}, quick=args.quick)
    print(f"written {path}")


if __name__ == "__main__":
    main()
