"""Probe: every real request of a part whose recorded plan (a whole-part run file) makes no audio and gives no
audio file, asked alone whether the user wants a sound or spoken audio back (``outputs.confirmed_want``: yes in
both orders). Tally by whether the gold makes audio (yes-gold: the check would find the miss; yes-nogold: a false
alarm, a redraw for nothing; no-gold: a miss it leaves). Prints seconds per question.

    python docs/results/dev-ab/s43/audioq.py dev RUN.json.gz
Run from the repository root (one llama.cpp process at a time)."""
import json, sys, time
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.outputs import confirmed_want
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART, RUN = sys.argv[1:3]
KIND = sys.argv[3] if len(sys.argv) > 3 else 'audio'
EXT = {'audio': ('.wav', '.mp3', '.m4a', '.ogg', '.flac'), 'video': ('.mp4', '.mov'), 'image': ('.jpg', '.png', '.jpeg')}
known = task_table()
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
run = rows(RUN)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally, secs = Counter(), []
for rid, req in sorted(reqs.items()):
    plan = run[rid]['harness']['plan'] or []
    if any(KIND in known[t['task']].outputs for t in plan if t['task'] in known):
        continue
    if any(e in req.request.lower() for e in EXT[KIND]):
        continue
    gold = any(KIND in known[t['task']].outputs for t in req.plan)
    start = time.time()
    yes = confirmed_want(scorer, req.request, KIND)
    secs.append(time.time() - start)
    outcome = ('yes-' if yes else 'no-') + ('gold' if gold else 'nogold')
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, request=req.request[:100], outcome=outcome), ensure_ascii=False), flush=True)
print(dict(tally), 'mean s', round(sum(secs) / max(len(secs), 1), 2))
