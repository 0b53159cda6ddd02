"""Experiment: verify each narrowly chosen task name among the chosen name and the names the runner-up token leads to."""
import json, re, sys, time
from collections import Counter
from llama_cpp import Llama, LlamaGrammar
from hugginggpt.tools.table import task_table
known = task_table(); names = sorted(known)
G = float(sys.argv[2])
res = json.load(open(sys.argv[1])); close = json.load(open(sys.argv[1] + '.close.json'))
by_text = {c['text']: c for c in close}
TASK = re.compile(r'"task": "([^"]*)"')
def swappable(step_args, a, b):
    sb = known[b]
    req = [x.name for x in sb.args if x.required]
    if not all(n in step_args for n in req): return False
    for n in step_args:
        arg = sb.find_arg(n)
        if arg is not None and known[a].find_arg(n) is not None and arg.value_kind != known[a].find_arg(n).value_kind: return False
    return True
items = []
for r in res['rows']:
    h = r['harness']; got = [t['task'] for t in h['plan']]; ok = sorted(got) == sorted(h['gold'])
    raw = h['raw'][0] if h['raw'] else ''
    c = by_text.get(raw)
    if c is None: continue
    try: tasks = json.loads(raw)['tasks']
    except Exception: continue
    spans = list(TASK.finditer(raw))
    if len(spans) != len(tasks): continue
    for m, t in zip(spans, tasks):
        s, e = m.start(1), m.end(1)
        cands = set()
        for cc in c['close']:
            if s <= cc['at'] <= e and cc['gap'] <= G:
                prefix = raw[s:cc['at']] + cc['other']
                if '"' in prefix: cs = [prefix.split('"')[0]] if prefix.split('"')[0] in names else []
                else: cs = [n for n in names if n.startswith(prefix)]
                cands |= {x for x in cs if x != t['task'] and swappable(t.get('args') or {}, t['task'], x)}
        if cands:
            items.append((r['id'], ok, h['request'], t.get('step') or '', t['task'], sorted(cands), h['gold']))
print(len(items))
llm = Llama(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=2048, n_threads=2, verbose=False)
def ask(req, step, opts):
    L = 'ABCDEFGH'[:len(opts)]
    g = LlamaGrammar.from_string('root ::= ' + ' | '.join(f'"{x}"' for x in L), verbose=False)
    lines = '\n'.join(f'{l}) {o}: {known[o].description}' for l, o in zip(L, opts))
    msg = (f"A user's request: {req}\n\nOne step of it: {step}\n\nWhich of these tasks does that step?\n{lines}\n\nAnswer with the letter.")
    out = llm.create_chat_completion(messages=[{"role": "system", "content": "You choose the task that does one step of a user's request."},
                                               {"role": "user", "content": msg}], grammar=g, temperature=0, max_tokens=1)
    return opts[L.index(out['choices'][0]['message']['content'].strip())]
st = Counter(); t0 = time.time()
for rid, ok, req, step, chosen, cands, gold in items:
    opts = [chosen] + cands
    a = ask(req, step, opts); b = ask(req, step, opts[::-1])
    pick = a if a == b else chosen
    if pick == chosen: v = 'keep'
    elif pick in gold and chosen not in gold: v = 'WIN'
    elif chosen in gold and pick not in gold: v = 'LOSS'
    else: v = 'swap-neutral'
    st[(('ok' if ok else 'miss'), v)] += 1
    print(rid, 'ok' if ok else 'miss', chosen, '->', pick, v, '| options', opts, '| orders', a, b, flush=True)
print(st, round(time.time() - t0), 's')
