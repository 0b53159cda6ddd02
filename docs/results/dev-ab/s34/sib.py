"""Experiment: siblings from the dev misses' one-for-one swaps asked about for every plan step with a close call
within 3 logits in its name (any runner-up), both orders; name-level verdicts on real dev and TaskBench dev."""
import gzip, json, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
from hugginggpt.agent.plan import choices as C
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
base = json.load(gzip.open('docs/results/dev-ab/s32/jf-dev208.json.gz'))
pairs = {}
for r in base['rows']:
    h = r['harness']; g, o = Counter(h['gold']), Counter(t['task'] for t in h['plan'])
    miss, extra = list((g - o).elements()), list((o - g).elements())
    if len(miss) == 1 and len(extra) == 1:
        pairs.setdefault(extra[0], set()).add(miss[0]); pairs.setdefault(miss[0], set()).add(extra[0])
print({k: sorted(v) for k, v in pairs.items()})
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
res = Counter(); t0 = time.time()
for res_file in sys.argv[1:]:
    rows = json.load(open(res_file))['rows']; seen = json.load(open(res_file + '.close.json'))
    byraw = {r['harness']['raw'][0]: r for r in rows}
    for e in seen:
        if e['stage'] != 'planning': continue
        r = byraw.get(e['text']); text = e['text']
        if r is None: continue
        try: data = json.loads(text)
        except Exception: continue
        tasks = C.answer_tasks(data); spans = list(C._TASK_VALUE.finditer(text))
        if not tasks or len(spans) != len(tasks): continue
        plan = Counter(t['task'] for t in tasks); gold = Counter(r['harness']['gold'])
        for i, m in enumerate(spans):
            ch = m.group(1)
            if ch not in pairs or ch not in known: continue
            if not any(m.start(1) <= c['at'] <= m.end(1) for c in e['close']): continue
            args = tasks[i].get('args') or {}
            others = [o for o in sorted(pairs[ch]) if o in known and C.swappable(args, known[ch], known[o])][:2]
            if not others: continue
            step = str(tasks[i].get('step') or '').strip() or ch
            pick = C.picked(llm.answer_scores, r['harness']['request'], step, [ch, *others], known)
            if pick == ch: v = 'kept-right' if plan[ch] <= gold[ch] else 'kept-wrong'
            else: v = 'loss' if plan[ch] <= gold[ch] else 'win' if gold[pick] > plan[pick] else 'neutral'
            res[(res_file.split('/')[-1][:6], v)] += 1
            print(r['id'], ch, others, '->', pick, v, flush=True)
print(sorted(res.items()), round(time.time() - t0))
