"""Probe: for each step of one pair of twin tasks (env PAIR, default text-to-speech,text-to-audio) of the recorded plans, ask the model alone, as the choice
check asks (``choices.picked``: the request, the step's own words, both orders), whether that step is done by the
task written or by the other of the two. Prints each case and a tally per task written: moved to the other where
the gold holds the other and not the written one (won), moved where the written one is right (lost)."""
import gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

import os
PAIR = tuple(os.environ.get("PAIR", "text-to-speech,text-to-audio").split(","))
known = dict(task_table())
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
tally = Counter()
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        rid = row['id']
        gold = Counter(t['task'] for t in reqs[rid].plan); have = Counter(t['task'] for t in h.get('plan') or [])
        for t in h.get('plan') or []:
            if t['task'] not in PAIR:
                continue
            other = PAIR[1 - PAIR.index(t['task'])]
            pick = picked(scorer, reqs[rid].request, t.get('step') or t['task'], [t['task'], other], known)
            right = have[t['task']] <= gold[t['task']]
            other_missing = have[other] < gold[other]
            moved = pick != t['task']
            outcome = ('won' if other_missing and not right else 'lost' if right else 'neutral') if moved else (
                'kept right' if right else 'kept wrong')
            tally[(t['task'], outcome)] += 1
            print(json.dumps(dict(id=rid, task=t['task'], step=t.get('step'), outcome=outcome), ensure_ascii=False), flush=True)
for k, v in sorted(tally.items()):
    print(*k, v)
