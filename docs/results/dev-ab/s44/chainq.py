"""Probe: a step reading a given file F beside an earlier step that made a new picture (or sound, or video) from F
that nothing reads (enhance example.jpg, then classify example.jpg), in recorded runs: asked alone which the step
works on, F as the user gave it or the earlier step's result, lettered in both orders. Prints each case with the
pick (``result`` only when both orders pick it); real requests are tallied against the gold plan's edges.

    python docs/results/dev-ab/s44/chainq.py dev            # every recorded real run of the part
    python docs/results/dev-ab/s44/chainq.py tb RUN.json.gz  # a recorded TaskBench run (read the cases)
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.chains import chain_cases, reads_result
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART = sys.argv[1]
known = task_table()
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)} if PART != 'tb' else {}
seen, cases = set(), []
for rid, row in (recorded_rows('taskbench', paths=sys.argv[2:]) if PART == 'tb' else recorded_rows('real', reqs)):
    h = row['harness']
    for case in chain_cases(h.get('plan') or [], known):
        key = (rid, case.reader.get('step'), case.maker.get('step'))
        if key not in seen:
            seen.add(key)
            cases.append((rid, h['request'], case))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, request, case in cases:
    pick = 'result' if reads_result(scorer, request, case) else 'file'
    out = dict(id=rid, reader=[case.reader['task'], case.reader.get('step')],
               maker=[case.maker['task'], case.maker.get('step')], pick=pick)
    if PART != 'tb':
        gold = reqs[rid].plan
        ids = {t['id']: t['task'] for t in gold}
        edges = {(ids.get(int(v.split('-')[1])), t['task']) for t in gold for v in (t.get('args') or {}).values()
                 if isinstance(v, str) and v.startswith('<resource>-') and v.split('-')[1].isdigit()}
        chained = (case.maker['task'], case.reader['task']) in edges
        out['outcome'] = ('won' if chained else 'lost') if pick == 'result' else ('kept-wrong' if chained else 'kept-right')
        tally[out['outcome']] += 1
    else:
        out['request'] = request[:160]
    print(json.dumps(out, ensure_ascii=False), flush=True)
print(dict(tally))
