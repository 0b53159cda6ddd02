"""`hugginggpt compare`: run agents on TaskBench requests with one LLM; score, tabulate and plot them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("compare", help="compare agents on TaskBench", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="TaskBench folder (tool_desc.json, data.json, ...)")
    parser.add_argument("--agents", default="global,react,tools", help="comma-separated: global, react, tools")
    parser.add_argument("--llm", required=True, help='controller LLM spec, e.g. "openai:gpt-4o-mini" or "gguf:PATH"')
    parser.add_argument("--limit", type=int, default=None, help="at most this many requests")
    parser.add_argument("--types", default=None, help="graph types to use: single,chain,dag (default: all)")
    parser.add_argument("--seed", type=int, default=None, help="shuffle the requests with this seed before --limit")
    parser.add_argument("--mode", choices=["plan", "full"], default="plan",
                        help="plan: plans only, no model runs (default); full: real execution")
    parser.add_argument("--out", default="compare-out", help="output folder (re-runs resume from it)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from hugginggpt.cli.score_cmd import metrics_table
    from hugginggpt.errors import HuggingGPTError
    from hugginggpt.eval.compare import AGENT_NAMES, Comparison, selected_types
    from hugginggpt.eval.taskbench import load_taskbench
    from hugginggpt.llm import load_llm

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in AGENT_NAMES]
    if unknown or not agents:
        raise HuggingGPTError(f"unknown agent(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(AGENT_NAMES)}")
    dataset = load_taskbench(args.data)
    samples = dataset.select(types=selected_types(args.types), limit=args.limit, seed=args.seed)
    console = Console(stderr=True)
    if dataset.problems:
        console.print(f"[yellow]{len(dataset.problems)} malformed sample(s) left out[/] (first: {dataset.problems[0]})")
    comparison = Comparison(dataset, load_llm(args.llm), Path(args.out), agents=agents, mode=args.mode)
    reports = comparison.run(samples)
    out = Console()
    for name, report in reports.items():
        out.print(metrics_table(report.scores, title=f"{name} ({args.mode}, {len(report.rows)} requests)"))
        s = report.summary()
        out.print(f"  LLM calls {s['llm_calls']:.2f}/request, tokens {s['prompt_tokens']:.0f} in "
                  f"+ {s['completion_tokens']:.0f} out, {s['seconds']:.2f} s/request, {s['failures']} failed")
    if not args.no_plots:
        from hugginggpt.eval.plots import write_plots

        write_plots(comparison)
    out.print(f"results in {Path(args.out).resolve()}")
    return 0
