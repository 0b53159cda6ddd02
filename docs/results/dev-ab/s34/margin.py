"""Experiment: the choice question's scores in both orders, for each narrow choice the library asks about;
decision rules evaluated offline (both orders agree vs mean margin)."""
import json, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
from hugginggpt.agent.plan import choices as C
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
out = []
for res_file in sys.argv[2:]:
    rows = json.load(open(res_file))['rows']; seen = json.load(open(res_file + '.close.json'))
    byraw = {r['harness']['raw'][0]: r for r in rows}
    for e in seen:
        if e['stage'] != 'planning': continue
        r = byraw.get(e['text']); text = e['text']
        if r is None: continue
        try: data = json.loads(text)
        except Exception: continue
        tasks = C.answer_tasks(data)
        for ch in C.narrow_choices(text, e['close'], data, known):
            t = tasks[ch.index]; args = t.get('args') or {}
            others = [o for o in ch.others if C.swappable(args, known[ch.chosen], known[o])]
            if not others: continue
            step = str(t.get('step') or '').strip() or ch.chosen
            opts = [ch.chosen, *others]; req = r['harness']['request']
            s1 = llm.answer_scores(C.choice_messages(req, step, opts, known), list(C.LETTERS[:len(opts)]))
            rev = opts[::-1]
            s2 = llm.answer_scores(C.choice_messages(req, step, rev, known), list(C.LETTERS[:len(rev)]))
            sc = {o: (s1[opts.index(o)], s2[rev.index(o)]) for o in opts}
            plan = Counter(x['task'] for x in tasks); gold = Counter(r['harness']['gold'])
            out.append({'id': r['id'], 'file': res_file, 'chosen': ch.chosen, 'others': others, 'scores': sc,
                        'plan': dict(plan), 'gold': dict(gold)})
            print(r['id'], ch.chosen, others, {k: [round(x, 2) for x in v] for k, v in sc.items()}, dict(gold), flush=True)
json.dump(out, open(sys.argv[1], 'w'))
