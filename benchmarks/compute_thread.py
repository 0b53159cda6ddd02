"""Decoding speed when llama.cpp is called from many threads versus from one (``hugginggpt.llm.compute_thread``).

LangChain runs a synchronous chat model in a pool of worker threads, so without the compute thread
the same ``Llama`` decodes on whichever worker is free. With llama.cpp's OpenMP build each such thread
gets its own OpenMP team, and decoding slows down once several teams exist. This decodes 20 single
tokens after a 2,000-token context, five times each way, prints milliseconds per token and writes
``docs/results/benchmarks/compute_thread-<label>.json``:

    python benchmarks/compute_thread.py --model qwen2.5-coder-1.5b --label amd-epyc

Run it on an idle machine (nothing else decoding). ``--quick``: the smallest shared model, 64 tokens
of context, 4 decoded, one round (checks the script, measures nothing).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.planning_quality import gguf_path  # noqa: E402
from benchmarks._stubs import cpu_name, quick_parser, write_result  # noqa: E402
from hugginggpt.llm import compute_thread  # noqa: E402

CONTEXT, TOKENS, ROUNDS = 2000, 20, 5


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = quick_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="fetch-gguf name or a .gguf path (default qwen2.5-coder-1.5b; "
                                                      "--quick: smollm2-135m)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--label", default=None, help="result file suffix (default: the model file's name)")
    args = parser.parse_args(argv)
    context, decoded, rounds = (64, 4, 1) if args.quick else (CONTEXT, TOKENS, ROUNDS)
    model = args.model or ("smollm2-135m" if args.quick else "qwen2.5-coder-1.5b")
    from llama_cpp import Llama

    llama = compute_thread.run(Llama, model_path=gguf_path(model), n_ctx=4096, n_threads=args.threads,
                               verbose=False)
    tokens = llama.tokenize(b"The quick brown fox jumps over the lazy dog. " * 250)[: context + decoded]
    compute_thread.run(llama.eval, tokens[:context])

    def decode() -> float:
        started = time.perf_counter()
        for token in tokens[context:]:
            llama.eval([token])
        llama.n_tokens = context
        llama._ctx.kv_cache_seq_rm(-1, context, -1)
        return 1000 * (time.perf_counter() - started) / decoded

    one = [compute_thread.run(decode) for _ in range(rounds)]
    hopping: list[float] = []
    for _ in range(rounds):  # a new caller thread each round, as a worker pool can hand out
        caller = threading.Thread(target=lambda: hopping.append(decode()))
        caller.start()
        caller.join()
    result = {"model": Path(llama.model_path).name, "cpu": cpu_name(), "cores": os.cpu_count(),
              "load_average": os.getloadavg(), "context_tokens": context, "decoded_tokens": decoded,
              "rounds": rounds, "one_thread_ms_per_token": round(statistics.median(one), 1),
              "hopping_threads_ms_per_token": round(statistics.median(hopping), 1)}
    print(json.dumps(result))
    out = write_result(f"compute_thread-{args.label or Path(llama.model_path).stem}", result, quick=args.quick,
                       folder=ROOT / "docs" / "results" / "benchmarks")
    print(f"wrote {out.relative_to(ROOT)}")
    return result


if __name__ == "__main__":
    main()
