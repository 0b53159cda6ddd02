"""`hugginggpt compare`: run agents on TaskBench requests with one LLM; score, tabulate and plot them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("compare", help="compare agents on TaskBench", description=__doc__.splitlines()[0],
                                   **help_options("compare"))
    parser.add_argument("--data", required=True, help="TaskBench folder (tool_desc.json, data.json, ...)")
    parser.add_argument("--agents", default="global,react,tools", help="comma-separated: global, react, tools; the ecosystem's agents (--mode plan, the peers "
                             "extra): langchain-hugginggpt, create-agent, smolagents-tools, smolagents-code")
    parser.add_argument("--llm", required=True, help='controller LLM spec, e.g. "openai:gpt-4o-mini" or "gguf:PATH"')
    parser.add_argument("--limit", type=int, default=None, help="at most this many requests")
    parser.add_argument("--types", default=None, help="graph types to use: single,chain,dag (default: all)")
    parser.add_argument("--seed", type=int, default=None, help="shuffle the requests with this seed before --limit")
    parser.add_argument("--mode", choices=["plan", "full"], default="plan",
                        help="plan: plans only, no model runs (default); full: real execution")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all",
                        help="the fixed dev/test split of hugginggpt.eval.splits to use (default: all samples)")
    parser.add_argument("--tools", choices=["domain", "all"], default="domain",
                        help="tasks offered to every agent: domain = those the dataset's tools map to, as "
                             "TaskBench offers tool_desc.json (default); all = every task of the table")
    parser.add_argument("--critic", default=None, metavar="LLM_SPEC",
                        help="judge every plan with HuggingGPT's critic prompt on this LLM (e.g. the same spec "
                             "as --llm); adds the critic pass rate to the tables")
    parser.add_argument("--out", default="compare-out", help="output folder (re-runs resume from it)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from hugginggpt.cli.score_cmd import metrics_table
    from hugginggpt.errors import HuggingGPTError
    from hugginggpt.eval.compare import Comparison, check_agents, selected_types
    from hugginggpt.eval.splits import select_split
    from hugginggpt.eval.taskbench import load_taskbench
    from hugginggpt.llm import load_llm

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    check_agents(agents, args.mode)
    dataset = load_taskbench(args.data)
    if args.limit is not None and args.limit < 1:
        raise HuggingGPTError(f"--limit must be at least 1, got {args.limit}")
    split = set(s.id for s in select_split(dataset.samples, args.split))
    samples = [s for s in dataset.select(types=selected_types(args.types), seed=args.seed) if s.id in split]
    samples = samples[:args.limit] if args.limit is not None else samples
    console = Console(stderr=True)
    if dataset.problems:
        console.print(f"[yellow]{len(dataset.problems)} malformed sample(s) left out[/] (first: {dataset.problems[0]})")
    llm = load_llm(args.llm)
    critic = None
    if args.critic:
        critic = llm if args.critic == args.llm else load_llm(args.critic)
    comparison = Comparison(dataset, llm, Path(args.out), agents=agents, mode=args.mode, tools=args.tools,
                            critic=critic)
    reports = comparison.run(samples)
    out = Console()
    for name, report in reports.items():
        out.print(metrics_table(report.scores, title=f"{name} ({args.mode}, --tools {args.tools}, "
                                                     f"{len(report.rows)} requests)"))
        s = report.summary()
        if s.get("single_task_accuracy") is not None:
            out.print(f"  single-task accuracy {s['single_task_accuracy']:.3f}")
        if critic is not None:
            rate = s.get("critic_pass_rate")
            out.print(f"  critic pass rate {'n/a' if rate is None else f'{rate:.3f}'} "
                      f"({s.get('critic_judged', 0)} judged, {s.get('critic_no_verdict', 0)} without a verdict)")
        out.print(f"  LLM calls {s['llm_calls']:.2f}/request, tokens {s['prompt_tokens']:.0f} in "
                  f"+ {s['completion_tokens']:.0f} out, {s['seconds']:.2f} s/request, {s['failures']} failed, "
                  f"{s['parse_failures']} with unreadable answers")
    if not args.no_plots:
        from hugginggpt.eval.plots import write_plots

        write_plots(comparison)
    out.print(f"results in {Path(args.out).resolve()}")
    return 0
