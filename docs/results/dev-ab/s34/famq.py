"""Experiment: family runner-ups (>2 names): pick among the swappable family, then confirm two-way both orders."""
import json, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
from hugginggpt.agent.plan import choices as C
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
C.LETTERS = "ABCDEFGHIJ"
seen = json.load(open('/work/runs/s33/cc100.json.close.json'))
d = json.load(open('/work/runs/s33/choice-dev208.json'))
byraw = {r['harness']['raw'][0]: r for r in d['rows']}
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
scorer = llm.answer_scores
res = Counter(); out = []; t0 = time.time()
for e in seen:
    if e['stage'] != 'planning': continue
    r = byraw.get(e['text']); text = e['text']
    if r is None: continue
    try: data = json.loads(text)
    except Exception: continue
    tasks = C.answer_tasks(data); spans = list(C._TASK_VALUE.finditer(text))
    if not tasks or len(spans) != len(tasks): continue
    gold = Counter(r['harness']['gold'])
    for i, m in enumerate(spans):
        s, en, ch = m.start(1), m.end(1), m.group(1)
        fam = set()
        for c in e['close']:
            if not s <= c['at'] <= en or c['gap'] > C.MAX_GAP: continue
            led = C._led_to(text[s:c['at']] + c['other'], known)
            if len(led) > 2: fam.update(led)
        fam.discard(ch)
        args = tasks[i].get('args') or {}
        fam = sorted(o for o in fam if ch in known and C.swappable(args, known[ch], known[o]))
        if not fam: continue
        step = tasks[i].get('step') or ch
        req = r['harness']['request']
        # stage 1: many-way, both orders
        opts = [ch, *fam]
        sc1 = scorer(C.choice_messages(req, step, opts, known), list(C.LETTERS[:len(opts)]))
        top1 = opts[max(range(len(opts)), key=sc1.__getitem__)]
        rev = list(reversed(opts))
        sc2 = scorer(C.choice_messages(req, step, rev, known), list(C.LETTERS[:len(rev)]))
        top2 = rev[max(range(len(rev)), key=sc2.__getitem__)]
        pick = ch
        if top1 != ch or top2 != ch:
            # the alternative: the many-way pick that is not the chosen one (agreeing orders first)
            alt = top1 if top1 != ch else top2
            pick = C.picked(scorer, req, step, [ch, alt], known)
        else:
            alt = None
        good = gold[pick] > 0 and (gold[ch] == 0 or pick == ch)
        verdict = 'same' if pick == ch else ('win' if gold[pick] > 0 and gold[ch] < Counter(t['task'] for t in tasks)[ch] else 'loss' if gold[ch] >= Counter(t['task'] for t in tasks)[ch] else 'neutral')
        res[verdict] += 1
        out.append((r['id'], ch, fam, top1, top2, alt, pick, verdict))
        print(r['id'], ch, '->', pick, '| many', top1, top2, '| gold', dict(gold), verdict, flush=True)
print(res, time.time() - t0)
json.dump(out, open('/work/runs/s34/famq.json', 'w'))
