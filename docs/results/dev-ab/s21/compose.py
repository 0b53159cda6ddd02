"""One result file from a replay of every request (BASE) and a live run of some of them (LIVE: the requests
whose prompt changed), each request's row taken from LIVE when it has one, scored as planning_quality
scores. Run from the repository root (HUGGINGGPT_SHARED set for TaskBench):
python docs/results/dev-ab/s21/compose.py BASE.json LIVE.json OUT.json [--not-exact r271]
(--not-exact: requests counted with an empty plan, the README's convention for r271)"""
import json, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.eval.taskbench import load_taskbench

base, live, out = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
empty = set(sys.argv[sys.argv.index('--not-exact') + 1].split(',')) if '--not-exact' in sys.argv else set()
by_id = {str(r['id']): r for r in live['rows']}
rows = [by_id.get(str(r['id']), r) for r in base['rows']]
if base['set'] == 'taskbench':
    dataset = load_taskbench(pq.TASKBENCH)
    summary = pq.taskbench_summary(dataset, rows)
else:
    for r in rows:
        if r['id'] in empty:
            r['harness'] = {**r['harness'], 'plan': []}
    reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
    summary = pq.real_summary([reqs[r['id']] for r in rows], rows)
harness = [r['harness'] for r in rows]
header = {k: v for k, v in base.items() if k not in ('rows', 'scores', 'exact')}
header.update(composed_from=[sys.argv[1], sys.argv[2]], live_rows=sum(str(r['id']) in by_id for r in base['rows']),
              llm_calls=round(sum(len(h['raw']) for h in harness) / len(harness), 3))
json.dump({**header, **summary, 'rows': rows}, open(out, 'w'), indent=1, ensure_ascii=False)
print(json.dumps(summary.get('exact') or summary['scores'].get('overall'), ensure_ascii=False))
