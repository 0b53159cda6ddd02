"""Probe: text-generation steps that read no earlier result and come after exactly one picture of their plan (an
earlier task's image output; with ``FILES=1`` in the environment a given image file an earlier task reads counts too), in every recorded real run of a part (any session, any draw; once per
request and step words), asked as the sibling question asks (both orders, each with its contrast): text generation
or image-to-text? Tally against the gold: moved where the gold has more image-to-text than the plan (won), moved
where it has no more (lost), kept with the gold having as many text generations (kept-right) or not (kept-wrong).

    python docs/results/dev-ab/s44/capq.py dev 'text-generation contrast' 'image-to-text contrast'
    python docs/results/dev-ab/s44/capq.py tb 'text-generation contrast' 'image-to-text contrast' RUN.json.gz
(``tb``: the rows of recorded TaskBench runs, each step once; the gold is the row's.) ``A=task B=task`` in the
environment probe another pair the same way (text-to-image against image-text-to-image).
Run from the repository root (one llama.cpp process at a time)."""
import json, os, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART, CA, CB = sys.argv[1:4]
A, B = os.environ.get('A', 'text-generation'), os.environ.get('B', 'image-to-text')
known = dict(task_table())
known[A] = known[A].model_copy(update={"contrast": CA, "siblings": [*known[A].siblings, B]})
known[B] = known[B].model_copy(update={"contrast": CB})
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)} if PART != 'tb' else {}
IMG = ('.jpg', '.jpeg', '.png', '.gif', '.bmp', '.webp')


def pictures(plan, upto):
    found = set()
    for t in plan[:upto]:
        spec = known.get(t.get('task'))
        if spec is not None and 'image' in (spec.outputs or ()):
            found.add(('task', t.get('id')))
        for v in (t.get('args') or {}).values() if os.environ.get('FILES') == '1' else ():
            if isinstance(v, str) and v.lower().endswith(IMG) and '<resource>' not in v:
                found.add(('file', v))
    return found


seen, cases, golds = set(), [], {}
for rid, row in (recorded_rows('taskbench', paths=sys.argv[4:]) if PART == 'tb' else recorded_rows('real', reqs)):
    plan = row['harness'].get('plan') or []
    if PART == 'tb':
        golds[rid] = (row['harness']['request'], Counter(row['harness']['gold']))
    for i, t in enumerate(plan):
        reads = '<resource>' in json.dumps(t.get('args') or {})
        if t.get('task') == A and t.get('step') and not reads and len(pictures(plan, i)) == 1 and (rid, t['step']) not in seen:
            seen.add((rid, t['step']))
            cases.append((rid, t['step'], Counter(x.get('task') for x in plan)))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, step, have in cases:
    request, gold = golds[rid] if PART == 'tb' else (reqs[rid].request, Counter(t['task'] for t in reqs[rid].plan))
    moved = picked(scorer, request, step, [A, B], known) != A
    if moved:
        outcome = 'won' if gold[B] > have[B] else 'lost'
    else:
        outcome = 'kept-right' if gold[A] >= have[A] else 'kept-wrong'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, step=step, gold=sorted(gold.elements()), outcome=outcome), ensure_ascii=False), flush=True)
print(dict(tally))
