"""Experiment: the choice check with MAX_GAP raised, on the 100 recorded dev first answers with close calls."""
import asyncio, json, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
from hugginggpt.agent.plan import choices as C
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
seen = json.load(open('/work/runs/s33/cc100.json.close.json'))
d = json.load(open('/work/runs/s33/choice-dev208.json'))
byraw = {r['harness']['raw'][0]: r for r in d['rows']}
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
res = Counter(); t0 = time.time(); out = []
for e in seen:
    if e['stage'] != 'planning': continue
    r = byraw.get(e['text']); text = e['text']
    if r is None: continue
    try: data = json.loads(text)
    except Exception: continue
    gold = Counter(r['harness']['gold'])
    C.MAX_GAP = 1.5
    lo = {c.index for c in C.narrow_choices(text, e['close'], data, known)}
    C.MAX_GAP = float(sys.argv[1])
    new, reps, asked = asyncio.run(C.check_choices(llm.answer_scores, r['harness']['request'], text, data, e['close'], known))
    for rep in reps:
        i = next(k for k, t in enumerate(data['tasks']) if t.get('id') == rep['task_id'])
        if i in lo: continue  # already asked at 1.5
        before, after = data['tasks'][i]['task'], new['tasks'][i]['task']
        plan = Counter(t['task'] for t in data['tasks'])
        v = 'win' if gold[after] > 0 and plan[before] > gold[before] else 'loss' if plan[before] <= gold[before] else 'neutral'
        res[v] += 1
        print(r['id'], before, '->', after, 'gold', dict(gold), v, flush=True)
    n_new = len([c for c in C.narrow_choices(text, e['close'], data, known) if c.index not in lo])
    res['asked_new'] += n_new
print(sorted(res.items()), time.time() - t0)
