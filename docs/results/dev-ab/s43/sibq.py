"""Probe (one sibling pair at a time): the steps written as task A in every recorded real run of a part (any session,
any draw; one per request, task and step words) asked, as the sibling question asks (both orders, each shown with
its contrast), whether they are done by A or by B; a required text B reads and A lacks is the step's own words.
Tally: moved where the gold has more B than the plan it came from would keep and fewer A (won), moved where the
gold has A and no B (lost), kept with the gold having A (kept-right) or only B (kept-wrong).

    python docs/results/dev-ab/s43/sibq.py dev A B 'A contrast' 'B contrast'
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_steps
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART, A, B, CA, CB = sys.argv[1:6]
known = dict(task_table())
known[A] = known[A].model_copy(update={"contrast": CA, "siblings": [*known[A].siblings, B]})
known[B] = known[B].model_copy(update={"contrast": CB})
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
cases = [(rid, step) for rid, _, step in recorded_steps(reqs, {A})]
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, step in cases:
    gold = Counter(t['task'] for t in reqs[rid].plan)
    moved = picked(scorer, reqs[rid].request, step, [A, B], known) != A
    if moved:
        outcome = 'won' if gold[B] else 'lost' if gold[A] else 'neutral'
    else:
        outcome = 'kept-right' if gold[A] else 'kept-wrong' if gold[B] else 'kept-neutral'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, step=step, gold=sorted(gold), outcome=outcome), ensure_ascii=False), flush=True)
print(dict(tally))
