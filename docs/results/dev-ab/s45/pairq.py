"""Probe: every step written as a drawing along a condition map (the seven X-text-to-image tasks) in the recorded real
runs of a part (once per request, task and step words), asked alone which of the seven drawings does it, each shown
with what it keeps (its ``contrast``), in every rotation of the list, the drawing with the highest summed
log-probability picked (drawing_choice's second question). Tally against the gold: another drawing picked where the
gold has it and not the written one (won), where the gold has the written one (lost), else (neutral); the written
drawing kept where the gold has it (kept-right) or not (kept-wrong).

    python docs/results/dev-ab/s45/pairq.py dev
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_steps
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import LETTERS, lettered
from hugginggpt.agent.plan.drawing_choice import drawings
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART = sys.argv[1]
known = task_table()
options = drawings(known)
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
cases = recorded_steps(reqs, set(options))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, task, step in cases:
    total = dict.fromkeys(options, 0.0)
    for shift in range(len(options)):
        order = options[shift:] + options[:shift]
        scores = scorer(lettered("planning_choice", [known[n].contrast for n in order], request=reqs[rid].request,
                                 step=step), list(LETTERS[:len(order)]))
        for name, score in zip(order, scores):
            total[name] += score
    pick = max(options, key=total.__getitem__)
    gold = Counter(t['task'] for t in reqs[rid].plan)
    if pick != task:
        outcome = 'lost' if gold[task] else 'won' if gold[pick] else 'neutral'
    else:
        outcome = 'kept-right' if gold[task] else 'kept-wrong'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, task=task, step=step, pick=pick, gold=sorted(gold), outcome=outcome,
                          margin=round(total[pick] - sorted(total.values())[-2], 2)), ensure_ascii=False), flush=True)
print(dict(tally))
