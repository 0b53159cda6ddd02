"""Planning time with the prompt state cache, against the limit this machine's own speed sets.

The limit (issue 10, item 7): planning takes at most

    1.5 x (plan tokens / generation rate + 300 / prompt reading rate)

that is, the time to write the plan plus read a 300-token request, with the static prompt already
evaluated. Both rates are measured here, on this machine, with the same model: the prompt rate
from a cold read of about 300 new tokens, the generation rate from 48 generated tokens, measured
in each process right after the planning call it judges (a shared machine's speed varies).

Measured, each with the real global-plan agent and the CLI's wiring (``make_agent``: local
execution, the controller serving the text tasks, all-MiniLM-L6-v2 for sentence similarity):

- ``cold``: the first planning call of a process with an empty cache folder;
- ``long-running``: planning in the same process after a whole run of another request (its
  selection, task and response prompts went through the model in between);
- ``fresh process``: a new Python process, the cache folder left by the first one (its load time
  is reported apart: the limit is about planning).

    python benchmarks/prompt_cache.py --model qwen2.5-coder-1.5b

Prints a table and writes ``docs/results/benchmarks/prompt_cache-<label>.json``. ``--quick``: the
smallest shared model, the cold case only (checks the script, measures nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._stubs import cpu_name, quick_parser, write_result  # noqa: E402
from tests.shared import fetch_shared_model  # noqa: E402

REQUESTS = [
    "Summarize this text in one sentence and then translate the summary into French: The museum will "
    "reopen in May after two years of work on its roof, its lifts and a new wing for modern art.",
    "Generate an image of a red bicycle leaning on a wall, then describe what is in the generated image.",
    "Read the text in example.jpg and then tell me how similar it is to the sentence 'Open every day'.",
    "Summarize this paragraph, then answer who pays for the lanes: The council voted to build twelve "
    "kilometres of protected bicycle lanes by next summer, paid for by a regional transport grant.",
]
REQUEST_TOKENS = 300
FACTOR = 1.5


def build_agent(gguf: str, minilm: str | None) -> tuple[Any, Any]:
    from hugginggpt.build import make_agent, make_llm
    from hugginggpt.config import load_settings

    settings = load_settings(llm=f"gguf:{gguf}", execution="local",
                             local_models=f"sentence-similarity={minilm}" if minilm else None)
    llm = make_llm(settings)
    return make_agent(settings, llm), llm


def measure_rates(llm: Any) -> dict[str, float]:
    """Prompt reading and generation speed of this model here (tokens/s), from llama.cpp's counters:
    a cold read of about 300 new tokens, then 48 generated ones."""
    import llama_cpp

    llama, lock = llm._client()
    words = " ".join(f"item{i} weighs {i * 7 % 13} kg" for i in range(50))
    with lock:
        llama.reset()
        llama_cpp.llama_perf_context_reset(llama.ctx)
        llama.create_completion(f"Weights ({time.time()}): {words}\nList them again:", max_tokens=48,
                                temperature=0.0, seed=0, stop=[])
        perf = llama_cpp.llama_perf_context(llama.ctx)
    return {"read_tokens": int(perf.n_p_eval), "prompt_tokens_per_s": perf.n_p_eval / (perf.t_p_eval_ms / 1000),
            "generated_tokens": int(perf.n_eval), "generated_tokens_per_s": perf.n_eval / (perf.t_eval_ms / 1000)}


def plan_once(agent: Any, llm: Any, request: str) -> dict[str, Any]:
    """Plan ``request``; with llama.cpp's counters: prompt tokens actually read (not from the cache)."""
    import llama_cpp

    llama = llm._client()[0]
    llama_cpp.llama_perf_context_reset(llama.ctx)
    started = time.perf_counter()
    result = agent.plan(request)
    seconds = time.perf_counter() - started
    perf = llama_cpp.llama_perf_context(llama.ctx)
    usage = result.usage or {}
    return {"request": request[:60], "seconds": round(seconds, 2), "tasks": len(result.plan.tasks),
            "llm_calls": int(usage.get("llm_calls") or 0),
            "plan_tokens": int(usage.get("completion_tokens") or 0), "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "prompt_tokens_read": int(perf.n_p_eval), "reading_seconds": round(perf.t_p_eval_ms / 1000, 2),
            "generating_seconds": round(perf.t_eval_ms / 1000, 2)}


def limit_for(row: dict[str, Any], rates: dict[str, float]) -> float:
    return FACTOR * (row["plan_tokens"] / rates["generated_tokens_per_s"]
                     + REQUEST_TOKENS / rates["prompt_tokens_per_s"])


def child(args: argparse.Namespace) -> None:
    """A fresh process: load, plan one request, print the row as JSON on the last line."""
    started = time.perf_counter()
    agent, llm = build_agent(args.gguf, args.minilm)
    loaded = time.perf_counter() - started
    row = plan_once(agent, llm, args.child)
    cache = llm._client()[0].cache
    row.update(load_seconds=round(loaded, 2), disk_loads=getattr(cache, "disk_loads", None),
               rates=measure_rates(llm))
    print(json.dumps(row))


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__.splitlines()[0])
    parser.add_argument("--model", default=None,
                        help="a shared GGUF name or a .gguf path (default qwen2.5-coder-1.5b; --quick: smollm2-135m)")
    parser.add_argument("--label", default=None)
    parser.add_argument("--cache-dir", default=None, help="prompt state folder (default: a new temporary one)")
    parser.add_argument("--long-running", type=int, default=2, metavar="N", help="plans after a whole run (max 2)")
    parser.add_argument("--fresh", type=int, default=2, metavar="N", help="fresh processes (max 2)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--gguf", help=argparse.SUPPRESS)
    parser.add_argument("--minilm", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return
    model = args.model or ("smollm2-135m" if args.quick else "qwen2.5-coder-1.5b")
    if args.quick:
        args.long_running = args.fresh = 0

    gguf = model if model.endswith(".gguf") else str(fetch_shared_model(model, script="fetch-gguf"))
    minilm = None  # without it the similarity task fails; planning is still measured
    if not args.quick:
        try:
            minilm = str(fetch_shared_model("all-minilm-l6-v2", script="fetch-model"))
        except Exception:  # noqa: BLE001
            pass
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="prompt-cache-bench-")
    os.environ["HUGGINGGPT_CACHE"] = cache_dir
    os.environ.setdefault("HUGGINGGPT_HOME", tempfile.mkdtemp(prefix="prompt-cache-runs-"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    started = time.perf_counter()
    agent, llm = build_agent(gguf, minilm)
    load_seconds = time.perf_counter() - started
    rows: list[dict[str, Any]] = []
    cold = plan_once(agent, llm, REQUESTS[0])
    rows.append({"case": "cold", **cold, "rates": measure_rates(llm)})
    for previous, request in list(zip(REQUESTS[:-2], REQUESTS[1:-1]))[: args.long_running]:
        agent.invoke({"input": previous})  # a whole run: selection, tasks and response go through the model
        rows.append({"case": "long-running", **plan_once(agent, llm, request), "rates": measure_rates(llm)})
    llm._client()[0].cache.flush()

    env = {**os.environ, "HUGGINGGPT_CACHE": cache_dir}
    for request in REQUESTS[-2:][: args.fresh]:
        done = subprocess.run([sys.executable, __file__, "--child", request, "--gguf", gguf,
                               *(["--minilm", minilm] if minilm else [])],
                              capture_output=True, text=True, env=env, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"fresh process failed: {done.stderr[-2000:]}")
        rows.append({"case": "fresh process", **json.loads(done.stdout.strip().splitlines()[-1])})

    for row in rows:  # each against the rates measured in its own process, right after it
        row["rates"] = {k: round(v, 2) for k, v in row["rates"].items()}
        row["limit_seconds"] = round(limit_for(row, row["rates"]), 2)
        row["within_limit"] = row["seconds"] <= row["limit_seconds"]
    report = {"model": Path(gguf).name, "cpu": cpu_name(), "cores": os.cpu_count(),
              "load_average": os.getloadavg(), "load_seconds": round(load_seconds, 2),
              "formula": f"{FACTOR} x (plan tokens / generation rate + {REQUEST_TOKENS} / prompt rate)",
              "rows": rows}
    print(f"{report['model']} on {report['cpu']} ({report['cores']} cores, load average "
          f"{report['load_average'][0]:.1f}); limit = {report['formula']}")
    print(f"{'case':<14} {'prompt':>7} {'read':>6} {'plan':>5} {'read/s':>7} {'gen/s':>6} {'plan s':>7} {'limit s':>7}  ok")
    for row in rows:
        rates = row["rates"]
        print(f"{row['case']:<14} {row['prompt_tokens']:>7} {row['prompt_tokens_read']:>6} {row['plan_tokens']:>5} "
              f"{rates['prompt_tokens_per_s']:>7.1f} {rates['generated_tokens_per_s']:>6.1f} "
              f"{row['seconds']:>7.2f} {row['limit_seconds']:>7.2f}  {'yes' if row['within_limit'] else 'NO'}")
    print("(prompt: tokens of the planning prompt(s); read: of those, evaluated rather than restored from the "
          "cache; plan: generated; cold is the reference without a cache)")
    label = args.label or Path(gguf).stem
    out = write_result(f"prompt_cache-{label}", report, quick=args.quick, folder=ROOT / "docs" / "results" / "benchmarks")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
