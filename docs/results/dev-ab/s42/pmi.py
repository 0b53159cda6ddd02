"""Probe: each step of recorded plans scored against every task that could do it, as the model's whole reply to
"which task does this step?" (the request, the step's own words, the task list with descriptions), and the same
scores given an empty request and step (the names' prior). Writes one JSON line per step with both, so that
decision rules (the direct argmax, PMI = direct - prior, thresholds) are compared offline.

    python docs/results/dev-ab/s42/pmi.py RUN.json.gz OUT.jsonl [IDS]
Run from the repository root."""
import gzip, json, sys, time
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import swappable
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

known = dict(task_table())
model = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2)
LIST = "\n".join(f"{n}: {s.description}" for n, s in known.items())
SYSTEM = "You name the task that does one step of a user's request. The tasks:\n" + LIST


def messages(request, step):
    return [("system", SYSTEM), ("human", f"A user's request: {request}\n\nOne step of it: {step}\n\n"
                                          "Which task does that step? Answer with its name.")]


def near(args, chosen, other):
    """other runs on args but for required text arguments it lacks (a question to write)."""
    if not isinstance(args, dict):
        return False
    for a in other.required_args:
        if a.name not in args and a.value_kind != 'text':
            return False
    for name in args:
        mine, theirs = chosen.find_arg(name), other.find_arg(name)
        if mine is not None and theirs is not None and mine.value_kind != theirs.value_kind:
            return False
    media = {a.value_kind for a in chosen.args if a.name in args and a.value_kind not in ('text', 'number', 'integer', 'boolean', 'choice', 'list')}
    theirs = {a.value_kind for a in other.required_args if a.value_kind not in ('text', 'number', 'integer', 'boolean', 'choice', 'list')}
    return theirs <= media and bool(theirs) == bool(media)


names = list(known)
t0 = time.time()
prior = dict(zip(names, model.answer_scores(messages("", ""), names)))
print('prior', round(time.time() - t0, 1), 's', file=sys.stderr)
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
src, out = sys.argv[1], sys.argv[2]
ids = set(sys.argv[3].split(',')) if len(sys.argv) > 3 else None
d = json.load(gzip.open(src) if src.endswith('.gz') else open(src))
with open(out, 'w') as f:
    for row in d['rows']:
        rid = str(row.get('id') or row.get('sample_id'))
        if ids and rid not in ids:
            continue
        h = row['harness']
        words = reqs[rid].request if d['set'] == 'real' else h['request']
        for t in h.get('plan') or []:
            chosen = known.get(t['task'])
            if chosen is None:
                continue
            args = t.get('args') or {}
            cands = [n for n in names if n == t['task'] or swappable(args, chosen, known[n]) or near(args, chosen, known[n])]
            runs = [n for n in cands if n == t['task'] or swappable(args, chosen, known[n])]
            t1 = time.time()
            scores = model.answer_scores(messages(words, t.get('step') or t['task']), cands)
            rec = dict(id=rid, tid=t['id'], task=t['task'], step=t.get('step'), gold=h['gold'],
                       scores=dict(zip(cands, scores)), runs=runs, prior={n: prior[n] for n in cands},
                       seconds=round(time.time() - t1, 2))
            f.write(json.dumps(rec, ensure_ascii=False) + '\n'); f.flush()
