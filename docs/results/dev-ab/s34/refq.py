"""Experiment: an argument whose value was a narrow choice between an earlier result (<resource>-N) and the
request's own file or text, asked about alone (both orders); edge F1 before/after on TaskBench dev."""
import json, re, sys, time
from collections import Counter
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table, MEDIA_KINDS
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.agent.plan.context import request_inputs
from hugginggpt.agent.plan.prompt import request_context
from hugginggpt.llm.llamacpp import LlamaCppChatModel
known = task_table()
data = load_taskbench('/work/shared/taskbench'); gold = {s.id: s for s in data.samples}
mapping = TaskBenchMapping(data.tools)
res_file, close_file = sys.argv[1], sys.argv[1] + '.close.json'
rows = json.load(open(res_file))['rows']; seen = json.load(open(close_file))
byraw = {r['harness']['raw'][0]: r for r in rows}
llm = LlamaCppChatModel(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=4096, n_threads=2)
KEY = re.compile(r'"(\w+)":\s*$')
def f1(p, g):
    p, g = Counter(p), Counter(g)
    if not p and not g: return 1.0
    h = sum((p & g).values()); return 0.0 if not h else 2 * h / (sum(p.values()) + sum(g.values()))
def links(result): return [(l['source'], l['target']) for l in result.get('task_links') or []]
def ask(req, tasks, i, arg, opts):
    lines = "\n".join(f"{k}. {t.get('step') or t['task']} ({t['task']})" for k, t in enumerate(tasks))
    picks = []
    for order in (opts, opts[::-1]):
        o = "\n".join(f"{l}) {d}" for l, (_, d) in zip("AB", order))
        msgs = [("system", "You choose what one step of a user's request works on."),
                ("human", f"A user's request: {req}\n\nThe steps planned for it:\n{lines}\n\nStep {i} reads its {arg}. "
                          f"Which should it read?\n{o}\n\nAnswer with the letter.")]
        s = llm.answer_scores(msgs, ["A", "B"]); picks.append(order[0 if s[0] > s[1] else 1][0])
    return picks[0] if picks[0] == picks[1] else None
res = Counter(); t0 = time.time()
for e in seen:
    if e['stage'] != 'planning': continue
    r = byraw.get(e['text']); text = e['text']
    if r is None: continue
    try: ans = json.loads(text)
    except Exception: continue
    tasks = ans.get('tasks') or []
    req = r['harness']['request']
    inputs = request_inputs(request_context(req, (), []), ())
    starts = [m.start() for m in re.finditer(r'\{"step"', text)]
    for c in e['close']:
        if c['gap'] > 1.5: continue
        d, o = c['drawn'].strip(), c['other'].strip()
        if not ((d.startswith('"<') or d.startswith('<')) != (o.startswith('"<') or o.startswith('<'))): continue
        m = KEY.search(text[:c['at'] + (len(c['drawn']) - len(c['drawn'].lstrip()))])
        if not m: continue
        i = max([k for k, s in enumerate(starts) if s < c['at']], default=None)
        if i is None or i >= len(tasks): continue
        arg = m.group(1); t = tasks[i]; spec = known.get(t['task'])
        a = spec.find_arg(arg) if spec else None
        if a is None: continue
        cur = t['args'].get(arg)
        if not isinstance(cur, str): continue
        if cur.startswith('<resource>-'):
            if a.is_media:
                files = inputs.get(a.kind, ())
                if len(files) != 1: continue
                alt = files[0]; alt_d = f"the file {alt} given in the request"
            else: continue
            n = int(cur.split('-')[-1]) if cur.split('-')[-1].isdigit() else None
            cur_d = f"the result of step {n} ({tasks[n]['task']})" if n is not None and n < len(tasks) else cur
        else:
            kind = a.kind if a.is_media else 'text'
            makers = [k for k in range(i) if known.get(tasks[k]['task']) and known[tasks[k]['task']].produces(kind)]
            if not makers: continue
            n = makers[-1]; alt = f"<resource>-{n}"; alt_d = f"the result of step {n} ({tasks[n]['task']})"
            cur_d = (f"the file {cur} given in the request" if a.is_media else f"this text: \"{cur[:200]}\"")
        pick = ask(req, tasks, i, arg, [(cur, cur_d), (alt, alt_d)])
        verdict = 'kept' if pick in (None, cur) else 'changed'
        delta = None
        if verdict == 'changed':
            plan = [dict(s, args=dict(s['args'])) for s in r['harness']['plan']]
            target = next((s for s in plan if s['id'] == t.get('id') and s['task'] == t['task'] and s['args'].get(arg) == cur), None)
            if target is None: verdict = 'changed-unmatched'
            else:
                target['args'][arg] = alt
                from hugginggpt.agent.plan.model import refs_in
                target['dep'] = sorted(refs_in(target['args']))
                g = gold[str(r['id'])]; gl = [(l['source'], l['target']) for l in g.links]
                before = f1(links(mapping.plan_to_prediction(r['id'], r['harness']['plan'])), gl)
                after = f1(links(mapping.plan_to_prediction(r['id'], plan)), gl)
                delta = round(after - before, 3)
                res['win' if delta > 0 else 'loss' if delta < 0 else 'same'] += 1
        res[verdict] += 1
        print(r['id'], t['task'], arg, repr(cur[:30]), '->', repr(alt[:30]), c['gap'], verdict, delta, flush=True)
print(sorted(res.items()), round(time.time() - t0))
