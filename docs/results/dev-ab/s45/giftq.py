"""Probe of the built question (``repeats.picked_gift``: first in every rotation) on the steps of ``repeat_cases`` in
the recorded real runs of a part (once per request, task and step words). Tally as ``kindq.py``: renamed to a task
making a medium where the gold has more of it than the plan and fewer of the written task (won), where the gold has
as many of the written task as the plan (lost), else (neutral); kept (kept-right / kept-wrong).

    python docs/results/dev-ab/s45/giftq.py dev
(Run with the first version of ``picked_gift``, a pick first in every rotation: giftq-dev.log.)
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.repeats import picked_gift, repeat_cases
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import MEDIA_KINDS, task_table

known = task_table()
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), sys.argv[1])}
seen, cases = set(), []
for rid, row in recorded_rows('real', set(reqs)):
    plan = row['harness'].get('plan') or []
    for i in repeat_cases(plan, known):
        key = (rid, plan[i]['task'], plan[i]['step'])
        if key not in seen:
            seen.add(key)
            cases.append((rid, plan[i]['task'], plan[i]['step'], Counter(u['task'] for u in plan)))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, task, step, planned in cases:
    pick = picked_gift(scorer, reqs[rid].request, step, known)
    if pick is None or not any(k in MEDIA_KINDS for k in known[pick].outputs):
        pick = task
    gold = Counter(t['task'] for t in reqs[rid].plan)
    if pick != task:
        outcome = 'lost' if gold[task] >= planned[task] else 'won' if gold[pick] > planned[pick] else 'neutral'
    else:
        outcome = 'kept-right' if gold[task] >= planned[task] else 'kept-wrong'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, task=task, step=step, pick=pick, gold=sorted(gold), outcome=outcome),
                     ensure_ascii=False), flush=True)
print(dict(tally))
