"""A TaskBench whole part with the rows of later runs of some of its requests in place (each request's row from the
last file that planned it), scored again (``planning_quality.taskbench_summary``, ``costs``).

    python docs/results/dev-ab/s43/tbmerge.py OUT.json.gz FULL.json.gz RUN.json [RUN ...]
Run from the repository root."""
import gzip, json, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.taskbench import load_taskbench
from tests.shared import shared_path

out, full, *runs = sys.argv[1:]
result = json.load(gzip.open(full))
rows = {str(r['id']): r for r in result['rows']}
for path in runs:
    opened = gzip.open(path) if path.endswith('.gz') else open(path, encoding='utf-8')
    rows.update({str(r['id']): r for r in json.load(opened)['rows'] if str(r['id']) in rows})
merged = [rows[str(r['id'])] for r in result['rows']]
summary = pq.taskbench_summary(load_taskbench(shared_path('taskbench')), merged)
result.update({**pq.costs(merged, sum(r['harness']['seconds'] for r in merged)), **summary, 'rows': merged,
               'merged_from': [full, *runs]})
with gzip.open(out, 'wt', encoding='utf-8') as f:
    json.dump(result, f, ensure_ascii=False)
o = result['scores']['overall_overall']
print(out, len(merged), f"n-F1 {o['node_f1']:.3f} e-F1 {o['edge_f1']:.3f} v-F1 {o['v_f1']:.3f} exact {result['exact']['overall']:.3f}")
