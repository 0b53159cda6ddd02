"""`hugginggpt compare`: run agents on TaskBench requests with one LLM; score, tabulate and plot them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: the width of piped output: tables at their natural width, never cut to a terminal's
PIPED_WIDTH = 1000


def register(subparsers: Any) -> None:
    from hugginggpt.cli.examples import help_options

    parser = subparsers.add_parser("compare", help="compare agents on TaskBench", description=__doc__.splitlines()[0],
                                   **help_options("compare"))
    parser.add_argument("--data", required=True, help="TaskBench folder (tool_desc.json, data.json, ...)")
    parser.add_argument("--agents", default="global,react,tools", help="comma-separated: global, react, tools; the ecosystem's agents (--mode plan, the peers "
                             "extra): langchain-hugginggpt, create-agent, smolagents-tools, smolagents-code")
    parser.add_argument("--llm", metavar="SPEC",
                        help='controller LLM spec, e.g. "openai:gpt-4o-mini" or "gguf:PATH" (default: as for run)')
    parser.add_argument("--base-url", metavar="URL", help="OpenAI-compatible (or TGI) server for the controller "
                                                          "(vLLM, llama.cpp server, Ollama)")
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
    parser.add_argument("--concurrency", type=int, default=1, metavar="N",
                        help="requests in flight per agent (default 1); with the embedded controller they run "
                             "one at a time")
    parser.add_argument("--shard", metavar="I/N", help="run the I-th of N fixed parts of the requests; "
                                                       "`hugginggpt merge` joins the parts' folders")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="stop a request still running after this long and record it as failed")
    parser.add_argument("--out", default="compare-out", help="output folder (re-runs resume from it)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=command)


def output_console() -> Any:
    """stdout: the terminal's width on a terminal; piped, wide enough that no table is cut."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)


def load_critic(spec: str, llm: Any, settings: Any) -> Any:
    """The critic LLM: the controller itself for the same spec, else its own model (on the controller's
    server, ``--base-url``, unless it is an embedded GGUF)."""
    from hugginggpt.llm import load_llm, parse_spec

    if spec == settings.llm_spec():
        return llm
    base_url = settings.base_url if parse_spec(spec).provider != "gguf" else None
    return load_llm(spec, base_url=base_url)


def command(args: argparse.Namespace) -> int:
    from hugginggpt import build
    from hugginggpt.cli.compare_progress import ComparisonProgress
    from hugginggpt.cli.validation import check_llm
    from hugginggpt.config import load_settings
    from hugginggpt.errors import HuggingGPTError
    from hugginggpt.eval.compare import Comparison, check_agents, selected_types
    from hugginggpt.eval.shards import Shard
    from hugginggpt.eval.splits import select_split
    from hugginggpt.eval.taskbench import load_taskbench

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    check_agents(agents, args.mode)
    if args.limit is not None and args.limit < 1:
        raise HuggingGPTError(f"--limit must be at least 1, got {args.limit}")
    if args.concurrency < 1:
        raise HuggingGPTError(f"--concurrency must be at least 1, got {args.concurrency}")
    shard = Shard.parse(args.shard) if args.shard else None
    settings = load_settings(llm=args.llm, base_url=args.base_url)
    check_llm(settings.llm)
    dataset = load_taskbench(args.data)
    split = set(s.id for s in select_split(dataset.samples, args.split))
    samples = [s for s in dataset.select(types=selected_types(args.types), seed=args.seed) if s.id in split]
    samples = samples[:args.limit] if args.limit is not None else samples
    progress = ComparisonProgress()
    if dataset.problems:
        progress.console.print(f"[yellow]{len(dataset.problems)} malformed sample(s) left out[/] "
                               f"(first: {dataset.problems[0]})")
    llm = build.make_llm(settings)
    critic = load_critic(args.critic, llm, settings) if args.critic else None
    comparison = Comparison(dataset, llm, Path(args.out), agents=agents, mode=args.mode, tools=args.tools,
                            critic=critic, concurrency=args.concurrency, shard=shard, timeout=args.timeout,
                            progress=None if args.quiet else progress)
    comparison.run(samples)
    show_report(comparison.report, critic=critic is not None, plots=not args.no_plots)
    return 0


def show_report(report: Any, *, critic: bool, plots: bool) -> None:
    """Print each agent's metrics and figures, then one row per agent with intervals; write the plots."""
    from rich.table import Table

    from hugginggpt.cli.score_cmd import metrics_table
    from hugginggpt.eval.report import LEVEL

    out = output_console()
    for note in report.notes:
        out.print(f"note: {note}", markup=False, highlight=False)
    for name, agent in report.reports.items():
        out.print(metrics_table(agent.scores, title=f"{name} ({report.mode}, --tools {report.tools}, "
                                                    f"{len(agent.rows)} requests)"))
        s = agent.summary()
        if s.get("single_task_accuracy") is not None:
            out.print(f"  single-task accuracy {s['single_task_accuracy']:.3f}")
        if critic:
            rate = s.get("critic_pass_rate")
            out.print(f"  critic pass rate {'n/a' if rate is None else f'{rate:.3f}'} "
                      f"({s.get('critic_judged', 0)} judged, {s.get('critic_no_verdict', 0)} without a verdict)")
        out.print(f"  LLM calls {s['llm_calls']:.2f}/request, tokens {s['prompt_tokens']:.0f} in "
                  f"+ {s['completion_tokens']:.0f} out, {s['seconds']:.2f} s/request, {s['failures']} failed, "
                  f"{s['parse_failures']} with unreadable answers")
    rows = report.overview_rows()
    if rows:
        table = Table(title=f"agents ({LEVEL:.0%} bootstrap intervals over requests)")
        for column in rows[0]:
            table.add_column(column, no_wrap=True, justify="left" if column == "agent" else "right")
        for row in rows:
            table.add_row(*row.values())
        out.print(table)
    if plots:
        from hugginggpt.eval.plots import write_plots

        write_plots(report)
    out.print(f"results in {Path(report.out).resolve()}")
