"""Planning quality of the global-plan agent on three kinds of requests, each with a dev and a test part.

- ``--set taskbench`` (default): the TaskBench Hugging Face sample (``../shared/taskbench``), the agent
  offered the tasks the domain's 23 tools map to (as TaskBench's own prompt offers its tools), scored
  exactly as TaskBench's ``evaluate.py`` (``hugginggpt.eval.scoring``), plus the exact task list.
  ``--requests FILE`` replaces each request by its translation (``benchmarks/data/taskbench-zh.jsonl``:
  ``{"id", "split", "user_request"}``), same gold graphs; only the ids in the file are planned.
- ``--set real``: requests as users write them (``benchmarks/data/real_requests.jsonl``), all tasks
  offered, with their files and chat history; scored by exact task list, n-F1 and e-F1
  (``hugginggpt.eval.real_requests``).

Runs stage 1 only (``agent.aplan``) with a local GGUF controller and writes
``benchmarks/results/planning_quality-<label>.json`` (scores, costs, and each row with the LLM's raw
answers, which ``benchmarks/revalidate.py`` can validate again).

    python benchmarks/planning_quality.py --split dev --per-type 20 --offset 135 --label dev
    python benchmarks/planning_quality.py --requests benchmarks/data/taskbench-zh.jsonl --split dev --label zh-dev
    python benchmarks/planning_quality.py --set real --split dev --label real-dev

``--split dev --per-type N --offset K`` (TaskBench): from the fixed split (``hugginggpt.eval.splits``), N
samples of each graph type, the (K+1)-th to (K+N)-th in the split's hash order: stratified,
reproducible dev slices for trying one change at a time. Tune on ``dev`` only; ``test`` is for the
reported figures. Slow on a CPU (3-15 s per request): run one model at a time. ``--quick``: one
single-task dev request with the smallest shared model, written to ``benchmarks/results/quick/``
(checks the script, measures nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._stubs import quick_parser, result_path  # noqa: E402
from hugginggpt.agent import GlobalPlanAgent  # noqa: E402
from hugginggpt.eval.compare import placeholder_tools  # noqa: E402
from hugginggpt.eval.mapping import TaskBenchMapping  # noqa: E402
from hugginggpt.eval.real_requests import load_real_requests, score_plans, select_split  # noqa: E402
from hugginggpt.eval.scoring import METRICS, score  # noqa: E402
from hugginggpt.eval.taskbench import load_taskbench  # noqa: E402
from hugginggpt.llm import load_llm  # noqa: E402
from tests.shared import fetch_shared_model, shared_path  # noqa: E402

TASKBENCH = shared_path("taskbench")
REAL_REQUESTS = ROOT / "benchmarks" / "data" / "real_requests.jsonl"
GROUPS = ["overall_overall", "single_overall", "chain_overall", "dag_overall"]


def gguf_path(model: str) -> str:
    """A .gguf path as given, or the cached file the shared ``fetch-gguf`` script prints last."""
    if model.endswith(".gguf"):
        return model
    return str(fetch_shared_model(model, script="fetch-gguf"))


async def plan_one(agent: GlobalPlanAgent, request: str, history: list[Any] | None = None,
                   files: list[str] | None = None) -> dict[str, Any]:
    """One request planned: its plan, repairs, raw answers, usage, seconds and error (a failed request
    scores as an empty plan, and is counted)."""
    started = time.perf_counter()
    out: dict[str, Any] = {"plan": [], "repairs": [], "raw": [], "usage": {}, "error": None}
    try:
        result = await agent.aplan(request, history or None, files=files or None)
        out.update(plan=result.plan.as_list(), repairs=result.repairs, raw=result.raw_outputs, usage=result.usage)
    except Exception as exc:  # noqa: BLE001 - recorded and counted
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def taskbench_samples(dataset: Any, args: argparse.Namespace) -> tuple[list[Any], dict[str, str]]:
    """The samples to plan and, with ``--requests``, each one's translated request by id."""
    from hugginggpt.eval.splits import split_ids, split_key

    translated: dict[str, str] = {}
    if args.requests:
        for line in Path(args.requests).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if args.split in (None, row.get("split")):
                    translated[str(row["id"])] = row["user_request"]
    pool = [s for s in dataset.samples if not args.requests or s.id in translated]
    if args.ids_only:
        translated = {}
    if not args.split:
        return pool[args.start:args.end], translated
    wanted = set(split_ids(dataset.samples)[args.split])
    samples = []
    for graph_type in args.types.split(","):
        of_type = sorted((s for s in pool if s.id in wanted and s.type == graph_type), key=lambda s: split_key(s.id))
        samples += of_type[args.offset:args.offset + args.per_type]
    return samples, translated


async def run_taskbench(agent: GlobalPlanAgent, dataset: Any, mapping: TaskBenchMapping, samples: list[Any],
                        translated: dict[str, str], save: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n, sample in enumerate(samples, 1):
        request = translated.get(sample.id, sample.request)
        planned = await plan_one(agent, request)
        row = mapping.plan_to_prediction(sample.id, planned["plan"])
        gold = [mapping.to_task(str(node["task"])) or str(node["task"]) for node in sample.nodes]
        row["harness"] = {"type": sample.type, "request": request, **planned, "gold": gold}
        rows.append(row)
        print(f"[{n}/{len(samples)}] {sample.id} {planned['seconds']:.1f}s gold={gold} "
              f"pred={[t['task'] for t in planned['plan']]}{' ERROR ' + planned['error'] if planned['error'] else ''}",
              flush=True)
        save(rows)
    return rows


async def run_real(agent: GlobalPlanAgent, requests: list[Any], save: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n, item in enumerate(requests, 1):
        planned = await plan_one(agent, item.request, item.history, item.files)
        rows.append({"id": item.id, "lang": item.lang, "source": item.source,
                     "harness": {"request": item.request, **planned, "gold": [t["task"] for t in item.plan]}})
        ok = Counter(t["task"] for t in planned["plan"]) == Counter(t["task"] for t in item.plan)
        print(f"[{n}/{len(requests)}] {item.id} {planned['seconds']:.1f}s {'OK ' if ok else 'BAD'} "
              f"gold={[t['task'] for t in item.plan]} pred={[t['task'] for t in planned['plan']]}"
              f"{' ERROR ' + planned['error'] if planned['error'] else ''}", flush=True)
        save(rows)
    return rows


def costs(rows: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    """What planning the rows cost: seconds, LLM calls, prompt tokens, errors."""
    harness = [r["harness"] for r in rows]
    prompt_tokens = [h["usage"].get("prompt_tokens", 0) for h in harness if h["usage"]]
    seconds = [h["seconds"] for h in harness]
    return {
        "requests": len(rows),
        "errors": sum(1 for h in harness if h["error"]),
        "median_seconds": round(statistics.median(seconds), 3) if seconds else None,
        "mean_seconds": round(elapsed / max(len(rows), 1), 2),
        "llm_calls": round(sum(len(h["raw"]) for h in harness) / max(len(rows), 1), 3),
        "mean_prompt_tokens": round(sum(prompt_tokens) / max(len(prompt_tokens), 1), 1),
    }


def taskbench_summary(dataset: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """TaskBench's metrics by graph type, and the exact task list (as a multiset) per type."""
    predictions = {row["id"]: row for row in rows}
    labels = [r for r in dataset.records if r["id"] in predictions]
    scores = score(labels, predictions, list(dataset.tools.values()), groups=GROUPS)
    exact: dict[str, list[bool]] = {}
    for row in rows:
        h = row["harness"]
        hit = Counter(t["task"] for t in h["plan"]) == Counter(h["gold"])
        exact.setdefault("overall", []).append(hit)
        exact.setdefault(h["type"], []).append(hit)
    return {"scores": {g: {m: _round(getattr(s, m)) for m in METRICS} for g, s in scores.items()},
            "exact": {k: round(sum(v) / len(v), 4) for k, v in exact.items()}}


def real_summary(requests: list[Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Exact task list, n-F1 and e-F1, overall, by language group (en, other), by language, by number of
    gold tasks, and by number of gold tasks within each language group."""
    gold = {r.id: r.plan for r in requests}
    predicted = {row["id"]: row["harness"]["plan"] for row in rows}
    planned = [r for r in requests if r.id in predicted]
    groups: dict[str, list[Any]] = {"overall": planned}
    for r in planned:
        size = len(r.plan)
        size = str(size) if size < 3 else "3+"
        groups.setdefault(f"lang:{r.group}", []).append(r)
        if r.lang != r.group:
            groups.setdefault(f"lang:{r.lang}", []).append(r)
        groups.setdefault(f"tasks:{size}", []).append(r)
        groups.setdefault(f"lang:{r.group}/tasks:{size}", []).append(r)
    return {"scores": {name: score_plans({r.id: gold[r.id] for r in members}, predicted)
                       for name, members in sorted(groups.items())}}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("--set", choices=["taskbench", "real"], default="taskbench")
    parser.add_argument("--model", default=None,
                        help="fetch-gguf name or a .gguf path (default qwen2.5-coder-1.5b; --quick: smollm2-135m)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--end", type=int, default=40)
    parser.add_argument("--label", default="dev")
    parser.add_argument("--split", choices=["dev", "test"], default=None,
                        help="TaskBench: stratified samples from this part of the fixed split instead of "
                             "--start/--end; real: this part of the set")
    parser.add_argument("--per-type", type=int, default=12, help="TaskBench with --split: samples per graph type")
    parser.add_argument("--offset", type=int, default=0, help="TaskBench with --split: skip this many per graph type")
    parser.add_argument("--types", default="single,chain,dag", help="TaskBench with --split: graph types, in order")
    parser.add_argument("--requests", default=None, help="TaskBench: translated requests (JSON lines) to plan instead")
    parser.add_argument("--ids-only", action="store_true",
                        help="TaskBench with --requests: plan the same samples, with their English requests")
    parser.add_argument("--limit", type=int, default=None, help="real: plan at most this many requests")
    parser.add_argument("--ids", default=None,
                        help="comma-separated request or sample ids: plan only those of the selection (a paired re-run)")
    parser.add_argument("--data", default=None, help="the TaskBench folder or the real-request file")
    parser.add_argument("--out", default=None, help="result file (default benchmarks/results/planning_quality-LABEL.json)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=8192,
                        help="the context of the GGUF model (default: the embedded controller's, 8192)")
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0, help="the controller's sampling seed (another draw of the same run)")
    parser.add_argument("--structured", choices=["auto", "on", "off"], default="auto",
                        help="plan under the plan's JSON-schema grammar (on), in free text (off), or as the agent decides")
    parser.add_argument("--demos", type=int, default=None, help="few-shot demonstrations per request (default: the agent's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.split, args.per_type, args.types, args.limit = "dev", 1, "single", 1
    args.model_file = gguf_path(args.model or ("smollm2-135m" if args.quick else "qwen2.5-coder-1.5b"))
    llm = load_llm("gguf:" + args.model_file, temperature=args.temperature, n_threads=args.threads, n_ctx=args.n_ctx,
                   seed=args.seed)
    out = Path(args.out) if args.out else result_path(f"planning_quality-{args.label}", args.quick)
    started = time.perf_counter()
    header = {"model": Path(args.model_file).name, "set": args.set, "split": args.split, "requests_file": args.requests,
              **({"quick": True} if args.quick else {}), **({"seed": args.seed} if args.seed else {})}

    if args.set == "taskbench":
        dataset = load_taskbench(args.data or TASKBENCH)
        mapping = TaskBenchMapping(dataset.tools)
        tasks = mapping.domain_specs()
        samples, translated = taskbench_samples(dataset, args)
        if args.ids:
            samples = [s for s in samples if str(s.id) in set(args.ids.split(","))]
        header["slice"] = {"per_type": args.per_type, "offset": args.offset} if args.split else [args.start, args.end]

        def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
            return {**header, **costs(rows, time.perf_counter() - started), **taskbench_summary(dataset, rows)}
    else:
        requests = select_split(load_real_requests(args.data or REAL_REQUESTS), args.split)[:args.limit]
        if args.ids:
            requests = [r for r in requests if r.id in set(args.ids.split(","))]
        from hugginggpt.tools.table import task_table

        tasks = list(task_table())

        def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
            return {**header, **costs(rows, time.perf_counter() - started), **real_summary(requests, rows)}

    def save(rows: list[dict[str, Any]]) -> dict[str, Any]:
        summary = summarise(rows)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**summary, "rows": rows}, indent=1, ensure_ascii=False), encoding="utf-8")
        return summary

    with tempfile.TemporaryDirectory() as tmp:
        structured = {"auto": "auto", "on": True, "off": False}[args.structured]
        agent = GlobalPlanAgent(llm, tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp, structured=structured,
                                **({} if args.demos is None else {"demonstrations": args.demos}))
        if args.set == "taskbench":
            rows = asyncio.run(run_taskbench(agent, dataset, mapping, samples, translated, save))
        else:
            rows = asyncio.run(run_real(agent, requests, save))
    summary = save(rows)
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    print(f"wrote {out}")
    return summary


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


if __name__ == "__main__":
    main()
