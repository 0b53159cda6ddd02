"""Probe: every real request of a part whose recorded plan (a whole-part run file) makes no audio and gives no audio
file (as ``s43/audioq.py`` picks them), asked alone what the user wants back, two answers lettered in both orders:
what the plan gives ("a video") or that and a sound or spoken audio too. Prints each order's lead of the "with
audio" answer (log-probability), then tallies, for leads of at least 0, 0.5, 1 and 2 in both orders, the requests
it would redraw whose gold makes audio (found) and whose gold makes none (false alarms).

    python docs/results/dev-ab/s44/audio2q.py dev RUN.json.gz
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.outputs import delivered_kinds
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART, RUN = sys.argv[1:3]
EXT = ('.wav', '.mp3', '.m4a', '.ogg', '.flac')
NAME = {'text': 'a text', 'image': 'a picture', 'video': 'a video', 'audio': 'a sound'}
known = task_table()
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
run = rows(RUN)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
SYSTEM = "You read what a user asks an AI assistant to make for them."
HUMAN = "The user's request: {r}\n\nWhat does the user want to get back?\nA) {a}\nB) {b}\n\nAnswer with the letter."
found = []
for rid, req in sorted(reqs.items()):
    plan = run[rid]['harness']['plan'] or []
    if any('audio' in known[t['task']].outputs for t in plan if t['task'] in known):
        continue
    if any(e in req.request.lower() for e in EXT):
        continue
    gold = any('audio' in known[t['task']].outputs for t in req.plan)
    kinds = delivered_kinds(plan, known) or ['text']
    gives = ' and '.join(NAME[k] for k in kinds)
    without, with_ = f"{gives}, with no sound", f"{gives}, and a sound or spoken audio with it"
    leads = []
    for a, b in ((without, with_), (with_, without)):
        s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=req.request, a=a, b=b))], ['A', 'B'])
        w = 1 if b == with_ else 0
        leads.append(round(s[w] - s[1 - w], 2))
    found.append((rid, gold, leads))
    print(json.dumps(dict(id=rid, gold=gold, leads=leads, request=req.request[:80]), ensure_ascii=False), flush=True)
for m in (0, 0.5, 1, 2):
    t = Counter(('found' if g else 'false') for _, g, l in found if min(l) > m)
    print('lead >', m, dict(t), 'of', sum(g for _, g, _ in found), 'gold-audio requests')
