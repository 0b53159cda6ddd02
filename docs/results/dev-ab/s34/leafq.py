"""Experiment: is a derived last step (reads an earlier result, read by none) asked for? yes/no scored both orders."""
import json, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
from hugginggpt.agent.plan.model import refs_in
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
items = []
for path in sys.argv[2:]:
    for r in json.load(open(path))['rows']:
        h = r['harness']; plan = h['plan']
        if len(plan) < 2: continue
        gold = Counter(h['gold']); got = Counter(t['task'] for t in plan)
        read = {n for s in plan for n in refs_in(s.get('args') or {})}
        for s in plan:
            if s['id'] in read or not refs_in(s.get('args') or {}): continue
            extra = got[s['task']] > gold[s['task']]
            items.append((r['id'], 'extra' if extra else 'need', h['request'], s.get('step') or '', s['task']))
print(len(items), Counter(i[1] for i in items), flush=True)
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
SYS = "You check one step of a plan for a user's request."
def msgs(req, step, task, order):
    opts = "\n".join(f"{l}) {o}" for l, o in zip("AB", order))
    return [("system", SYS), ("human", f"A user's request: {req}\n\nOne step of a plan for it: {step} ({task}: {known[task].description})\n\n"
             f"Does the user ask for this step, or for something that needs it?\n{opts}\n\nAnswer with the letter.")]
res = Counter(); t0 = time.time(); out = []
for rid, kind, req, step, task in items:
    a = llm.answer_scores(msgs(req, step, task, ["yes", "no"]), ["A", "B"])
    b = llm.answer_scores(msgs(req, step, task, ["no", "yes"]), ["A", "B"])
    yes1 = a[0] - a[1]; yes2 = b[1] - b[0]
    v = 'yes' if yes1 > 0 and yes2 > 0 else 'no' if yes1 < 0 and yes2 < 0 else 'split'
    res[(kind, v)] += 1; out.append((rid, kind, task, step, round(yes1, 2), round(yes2, 2), v))
    print(rid, kind, task, '|', step[:60], round(yes1, 2), round(yes2, 2), v, flush=True)
print(sorted(res.items()), time.time() - t0)
json.dump(out, open(sys.argv[1], 'w'), ensure_ascii=False)
