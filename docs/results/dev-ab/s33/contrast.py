"""Quick experiment: does a focused two-choice question fix sibling picks? (not library code)"""
import gzip, json, random, sys, time
from collections import Counter
from llama_cpp import Llama, LlamaGrammar
from hugginggpt.tools.table import task_table
known = task_table()
d = json.load(gzip.open('docs/results/dev-ab/s32/jf-dev208.json.gz'))
pairs = set()
items = []
def sub(gold, got):
    g, o = Counter(gold), Counter(got)
    return list((g - o).elements()), list((o - g).elements())
for r in d['rows']:
    h = r['harness']; got = [t['task'] for t in h['plan']]
    miss, extra = sub(h['gold'], got)
    if len(miss) == 1 and len(extra) == 1:
        pairs.add(frozenset((miss[0], extra[0])))
        step = next(t for t in h['plan'] if t['task'] == extra[0])
        items.append(('miss', r['id'], h['request'], step.get('step') or '', miss[0], extra[0]))
pairmap = {}
for p in pairs:
    a, b = sorted(p); pairmap.setdefault(a, []).append(b); pairmap.setdefault(b, []).append(a)
for r in d['rows']:
    h = r['harness']; got = [t['task'] for t in h['plan']]
    if sorted(got) != sorted(h['gold']): continue
    for t in h['plan']:
        for alt in pairmap.get(t['task'], []):
            items.append(('hit', r['id'], h['request'], t.get('step') or '', t['task'], alt))
random.seed(0); hits=[i for i in items if i[0]=='hit']; items=[i for i in items if i[0]=='miss']+random.sample(hits,60)
print(len(items), Counter(i[0] for i in items))
llm = Llama(model_path='/root/.cache/hugginggpt-gguf/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', n_ctx=2048, n_threads=2, verbose=False)
g = LlamaGrammar.from_string('root ::= "A" | "B"', verbose=False)
def ask(req, step, first, second):
    msg = (f"A user's request: {req}\n\nOne step of it: {step}\n\nWhich of these two tasks does that step?\n"
           f"A) {first}: {known[first].description}\nB) {second}: {known[second].description}\n\nAnswer A or B.")
    out = llm.create_chat_completion(messages=[{"role": "system", "content": "You choose the task that does one step of a user's request."},
                                               {"role": "user", "content": msg}], grammar=g, temperature=0, max_tokens=1)
    return out['choices'][0]['message']['content'].strip()
res = Counter(); t0 = time.time(); rows = []
for kind, rid, req, step, right, wrong in items:
    a = ask(req, step, right, wrong)   # right is A
    b = ask(req, step, wrong, right)   # right is B
    verdict = ('right' if a == 'A' and b == 'B' else 'wrong' if a == 'B' and b == 'A' else 'split')
    res[(kind, verdict)] += 1
    rows.append((kind, rid, right, wrong, verdict))
    print(kind, rid, right, 'vs', wrong, verdict, flush=True)
print(res, time.time() - t0)
