"""Probe: the last text-generation steps that read earlier results (a step nothing reads, whose text holds a
``<resource>-N``), in every recorded real run of a part (once per request and step words), asked alone whether the
user asks for that step or whether it only restates what earlier steps give, two answers lettered in both orders.
Tally against the gold: dropped where the gold has fewer text generations than the plan (won), dropped where it has
as many (lost), kept with as many (kept-right) or fewer (kept-wrong).

    python docs/results/dev-ab/s44/restq.py dev
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import LETTERS
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel

PART = sys.argv[1]
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
SYSTEM = "You check one step of a plan made for a user's request."
HUMAN = "A user's request: {r}\n\nOne step of the plan: {s}\n\nWhat is that step?\nA) {a}\nB) {b}\n\nAnswer with the letter."
ASKED = "a part of what the user asks for"
RESTATES = "only puts together what earlier steps give, which the user gets anyway"
seen, cases = set(), []
for rid, row in recorded_rows('real', reqs):
    plan = row['harness'].get('plan') or []
    read = {int(v.split('-')[1]) for t in plan for v in (t.get('args') or {}).values()
            if isinstance(v, str) and v.startswith('<resource>-') and v.split('-')[1].isdigit()}
    for t in plan:
        text = json.dumps(t.get('args') or {})
        if (t.get('task') == 'text-generation' and '<resource>-' in text and t['id'] not in read and t.get('step')
                and (rid, t['step']) not in seen):
            seen.add((rid, t['step']))
            cases.append((rid, t['step'], Counter(x['task'] for x in plan)))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, step, have in cases:
    leads = []
    for a, b in ((ASKED, RESTATES), (RESTATES, ASKED)):
        s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=reqs[rid].request, s=step, a=a, b=b))], ['A', 'B'])
        r = 0 if a == RESTATES else 1
        leads.append(round(s[r] - s[1 - r], 2))
    gold = Counter(t['task'] for t in reqs[rid].plan)
    drop = min(leads) > 0
    fewer = gold['text-generation'] < have['text-generation']
    outcome = ('won' if fewer else 'lost') if drop else ('kept-wrong' if fewer else 'kept-right')
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, step=step, leads=leads, outcome=outcome), ensure_ascii=False), flush=True)
print(dict(tally))
