"""Probe: a step whose one required text argument holds words of its own (no result) after exactly one earlier step
that makes text nobody reads ("summarize the article, then edit the image based on the summary" written with the
edit's prompt "edit the image based on the summary"), in recorded runs: asked alone what the step takes as that
argument, the words written or the earlier step's result, lettered in both orders. Real requests are tallied
against the gold's edges (the reader's task reading the maker's task).

    python docs/results/dev-ab/s44/textq.py dev
    python docs/results/dev-ab/s44/textq.py tb RUN.json.gz
Run from the repository root (one llama.cpp process at a time)."""
import json, re, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART = sys.argv[1]
known = task_table()
REF = re.compile(r'<resource>-(\d+)')
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)} if PART != 'tb' else {}
SYSTEM = "You choose what one step of a user's request works on."
HUMAN = ("A user's request: {r}\n\nOne step of it: {s}\n\nWhat text does that step take as its {a}?\nA) {x}\nB) {y}\n\n"
         "Answer with the letter.")


def cases_of(plan):
    read = {int(x) for t in plan for x in REF.findall(json.dumps(t.get('args') or {}))}
    for i, reader in enumerate(plan):
        spec = known.get(reader.get('task'))
        if spec is None or REF.search(json.dumps(reader.get('args') or {})):
            continue
        texts = [a.name for a in spec.required_args if a.value_kind == 'text' and isinstance(reader['args'].get(a.name), str)]
        makers = [m for m in plan[:i] if m['id'] not in read and known.get(m['task']) and known[m['task']].produces('text')]
        if len(texts) == 1 and len(makers) == 1:
            yield makers[0], reader, texts[0]


seen, cases = set(), []
for rid, row in (recorded_rows('taskbench', paths=sys.argv[2:]) if PART == 'tb' else recorded_rows('real', reqs)):
    h = row['harness']
    for maker, reader, arg in cases_of(h.get('plan') or []):
        key = (rid, reader.get('step'), maker.get('step'))
        if key not in seen:
            seen.add(key)
            cases.append((rid, h['request'], maker, reader, arg))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, request, maker, reader, arg in cases:
    words = f'the words written for it: "{reader["args"][arg]}"'
    result = f'the result of the earlier step "{maker.get("step") or maker["task"]}"'
    picks = []
    for x, y in ((words, result), (result, words)):
        s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=request, s=reader.get('step') or reader['task'], a=arg,
                                                              x=x, y=y))], ['A', 'B'])
        picks.append((x, y)[max(range(2), key=s.__getitem__)] == result)
    pick = 'result' if all(picks) else 'words'
    out = dict(id=rid, reader=[reader['task'], reader.get('step'), arg], maker=[maker['task'], maker.get('step')], pick=pick)
    if PART != 'tb':
        gold = reqs[rid].plan
        ids = {t['id']: t['task'] for t in gold}
        edges = {(ids.get(int(x)), t['task']) for t in gold for x in REF.findall(json.dumps(t.get('args') or {}))}
        chained = (maker['task'], reader['task']) in edges
        out['outcome'] = ('won' if chained else 'lost') if pick == 'result' else ('kept-wrong' if chained else 'kept-right')
        tally[out['outcome']] += 1
    else:
        out['request'] = request[:150]
    print(json.dumps(out, ensure_ascii=False), flush=True)
print(dict(tally))
