"""Probe: real requests of a part whose recorded plan (any recorded run, any session; once per request) is one task
whose text arguments together are the whole message (the user's words handed to a model as they are), asked alone
whether the message only greets, thanks or chats (yes in both orders of yes/no). Tally: yes where the gold plan is
empty (won), yes where the gold has tasks (lost), no where the gold is empty (kept-wrong) or has tasks (kept-right).

    python docs/results/dev-ab/s44/chatq.py dev
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.agent.plan.model import Plan
from hugginggpt.agent.plan.outputs import echoes_message, only_chat
from hugginggpt.tools.table import task_table

PART = sys.argv[1]
known = task_table()
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}


cases = {}
for rid, row in recorded_rows('real', reqs):
    if rid not in cases and echoes_message(
            Plan.model_validate({'tasks': row['harness'].get('plan') or []}), reqs[rid].request, known):
        cases[rid] = row['harness']['plan'][0]['task']
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, task in sorted(cases.items()):
    empty = not reqs[rid].plan
    yes = only_chat(scorer, reqs[rid].request)
    outcome = ('won' if empty else 'lost') if yes else ('kept-wrong' if empty else 'kept-right')
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, task=task, request=reqs[rid].request[:90], outcome=outcome), ensure_ascii=False),
          flush=True)
print(dict(tally))
