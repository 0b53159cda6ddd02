"""Planning quality of the global-plan agent on a slice of the TaskBench Hugging Face sample.

Runs stage 1 only (``agent.aplan``) with a local GGUF controller, converts each plan to TaskBench's
format (``hugginggpt.eval.mapping``) and scores it exactly as TaskBench's ``evaluate.py`` does
(``hugginggpt.eval.scoring``). The agent sees the tasks that the domain's 23 tools map to, as
TaskBench's own prompt does. Writes ``benchmarks/results/planning_quality-<label>.json``.

    python benchmarks/planning_quality.py --model qwen2.5-coder-1.5b --split dev --per-type 12 --label dev

``--split dev --per-type N --offset K``: from the fixed split (``hugginggpt.eval.splits``), N samples
of each graph type, the (K+1)-th to (K+N)-th in the split's hash order: stratified, reproducible dev
slices for trying one change at a time. Tune on ``dev`` only; ``test`` is for the reported figures
(``hugginggpt compare --split test``).

Slow on a CPU (5-20 s per request): keep slices small, and run one model at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hugginggpt.agent import GlobalPlanAgent  # noqa: E402
from hugginggpt.eval.compare import placeholder_tools  # noqa: E402
from hugginggpt.eval.mapping import TaskBenchMapping  # noqa: E402
from hugginggpt.eval.scoring import METRICS, score  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from hugginggpt.llm import load_llm  # noqa: E402
from tests.shared import fetch_shared_model, shared_path  # noqa: E402

TASKBENCH = shared_path("taskbench")
GROUPS = ["overall_overall", "single_overall", "chain_overall", "dag_overall"]


def gguf_path(model: str) -> str:
    """A .gguf path as given, or the cached file the shared ``fetch-gguf`` script prints last."""
    if model.endswith(".gguf"):
        return model
    return str(fetch_shared_model(model, script="fetch-gguf"))


async def plan_slice(agent: GlobalPlanAgent, samples: list[Any], mapping: TaskBenchMapping,
                     save: Any = None) -> list[dict[str, Any]]:
    """Plan each sample in turn; ``save(rows)`` after each, so an interrupted run keeps its figures."""
    rows: list[dict[str, Any]] = []
    for n, sample in enumerate(samples, 1):
        started = time.perf_counter()
        error = None
        plan: list[dict[str, Any]] = []
        usage: dict[str, int] = {}
        repairs: list[dict[str, Any]] = []
        raw: list[str] = []
        try:
            result = await agent.aplan(sample.request)
            plan, usage, repairs, raw = result.plan.as_list(), result.usage, result.repairs, result.raw_outputs
        except Exception as exc:  # a failed request scores as an empty plan, and is counted
            error = f"{type(exc).__name__}: {exc}"
        row = mapping.plan_to_prediction(sample.id, plan)
        row["harness"] = {"type": sample.type, "seconds": round(time.perf_counter() - started, 3), "error": error,
                          "usage": usage, "plan": plan, "repairs": repairs, "raw": raw,
                          "gold": [n["task"] for n in sample.nodes]}
        rows.append(row)
        predicted = [node["task"] for node in row["result"]["task_nodes"]]
        print(f"[{n}/{len(samples)}] {sample.id} {row['harness']['seconds']:.1f}s gold={row['harness']['gold']} "
              f"pred={predicted}{' ERROR ' + error if error else ''}", flush=True)
        if save is not None:
            save(rows)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="fetch-gguf name or a .gguf path")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--end", type=int, default=40)
    parser.add_argument("--label", default="dev")
    parser.add_argument("--split", choices=["dev", "test"], default=None,
                        help="take stratified samples from this part of the fixed split instead of --start/--end")
    parser.add_argument("--per-type", type=int, default=12, help="with --split: samples per graph type")
    parser.add_argument("--offset", type=int, default=0, help="with --split: skip this many per graph type")
    parser.add_argument("--types", default="single,chain,dag", help="with --split: graph types, in this order")
    parser.add_argument("--out", default=None, help="result file (default benchmarks/results/planning_quality-LABEL.json)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument("--data", default=str(TASKBENCH))
    parser.add_argument("--structured", choices=["auto", "on", "off"], default="auto",
                        help="plan under the plan's JSON-schema grammar (on), in free text (off), or as the agent decides")
    parser.add_argument("--demos", type=int, default=None, help="few-shot demonstrations per request (default: the agent's)")
    args = parser.parse_args(argv)

    dataset = load_taskbench(args.data)
    mapping = TaskBenchMapping(dataset.tools)
    tasks = [mapping.to_task(tool) for tool in dataset.tools if mapping.to_task(tool)]
    samples = dataset.samples[args.start:args.end]
    if args.split:
        from hugginggpt.eval.splits import split_ids, split_key

        wanted = set(split_ids(dataset.samples)[args.split])
        samples = []
        for graph_type in args.types.split(","):
            of_type = sorted((s for s in dataset.samples if s.id in wanted and s.type == graph_type),
                             key=lambda s: split_key(s.id))
            samples += of_type[args.offset:args.offset + args.per_type]
    args.model_file = gguf_path(args.model)
    llm = load_llm("gguf:" + args.model_file, temperature=args.temperature, n_threads=args.threads,
                   n_ctx=args.n_ctx)
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"planning_quality-{args.label}.json"
    started = time.perf_counter()

    def save(rows: list[dict[str, Any]]) -> dict[str, Any]:
        summary = summarise(dataset, rows, args, time.perf_counter() - started)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**summary, "rows": rows}, indent=1, ensure_ascii=False), encoding="utf-8")
        return summary

    with tempfile.TemporaryDirectory() as tmp:
        structured = {"auto": "auto", "on": True, "off": False}[args.structured]
        agent = GlobalPlanAgent(llm, tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp, structured=structured,
                                **({} if args.demos is None else {"demonstrations": args.demos}))
        rows = asyncio.run(plan_slice(agent, samples, mapping, save))
    summary = save(rows)
    print(json.dumps(summary, indent=1))
    print(f"wrote {out}")
    return summary


def summarise(dataset: Any, rows: list[dict[str, Any]], args: argparse.Namespace, elapsed: float) -> dict[str, Any]:
    """Scores (TaskBench's own metrics) and costs of the rows planned so far."""
    predictions = {row["id"]: row for row in rows}
    labels = [r for r in dataset.records if r["id"] in predictions]
    scores = score(labels, predictions, list(dataset.tools.values()), groups=GROUPS)
    prompt_tokens = [r["harness"]["usage"].get("prompt_tokens", 0) for r in rows if r["harness"]["usage"]]
    return {
        "model": Path(args.model_file).name,
        "slice": ({"split": args.split, "per_type": args.per_type, "offset": args.offset} if args.split
                  else [args.start, args.end]),
        "median_seconds": _median([r["harness"]["seconds"] for r in rows]),
        "llm_calls": round(sum(len(r["harness"]["raw"]) for r in rows) / max(len(rows), 1), 3),
        "requests": len(rows),
        "errors": sum(1 for r in rows if r["harness"]["error"]),
        "mean_seconds": round(elapsed / max(len(rows), 1), 2),
        "mean_prompt_tokens": round(sum(prompt_tokens) / max(len(prompt_tokens), 1), 1),
        "scores": {g: {m: _round(getattr(s, m)) for m in METRICS} for g, s in scores.items()},
    }


def _median(values: list[float]) -> float | None:
    import statistics

    return round(statistics.median(values), 3) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


if __name__ == "__main__":
    main()
