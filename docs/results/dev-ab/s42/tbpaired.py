"""TaskBench rows planned again, paired with the recorded run: per request node F1 (our task names against the
gold's, ``harness.gold``) and edge F1 (TaskBench's links of ``result`` against the sample's), the plans that
changed, won / lost, and the whole part's TaskBench scores (``planning_quality.taskbench_summary``) with the new
rows in place.

    python docs/results/dev-ab/s42/tbpaired.py BASE_FULL.json.gz NEW.json
Run from the repository root."""
import os, sys
sys.path.insert(0, '.'); sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from _common import f1, rows
from hugginggpt.eval.taskbench import load_taskbench
from tests.shared import shared_path
from benchmarks import planning_quality as pq


ds = load_taskbench(shared_path('taskbench'))
base, new = rows(sys.argv[1]), rows(sys.argv[2])
merged = {**base, **{i: r for i, r in new.items() if i in base}}
changed = won = lost = 0
for i in sorted(set(new) & set(base)):
    b, n = base[i], new[i]
    bt = [t['task'] for t in b['harness']['plan'] or []]
    nt = [t['task'] for t in n['harness']['plan'] or []]
    gold = b['harness']['gold']
    links = [(l['source'], l['target']) for l in ds.get(i).links]
    bn, nn = f1(bt, gold), f1(nt, gold)
    be = f1([(l['source'], l['target']) for l in b['result']['task_links']], links)
    ne = f1([(l['source'], l['target']) for l in n['result']['task_links']], links)
    if bt != nt or abs(be - ne) > 1e-9:
        changed += 1
        won += (nn > bn) or (nn == bn and ne > be)
        lost += (nn < bn) or (nn == bn and ne < be)
        print(i, bt, '->', nt, 'gold', gold, f'node {bn:.2f}->{nn:.2f} edge {be:.2f}->{ne:.2f}')
print(f'{len(set(new) & set(base))} planned again, {changed} changed, {won} won / {lost} lost')
for label, use in (('before', base), ('after', merged)):
    summary = pq.taskbench_summary(ds, list(use.values()))
    o = summary['scores']['overall_overall']
    print(f"{label}: n-F1 {o['node_f1']:.3f}, e-F1 {o['edge_f1']:.3f}, v-F1 {o['v_f1']:.3f}, exact {summary['exact']['overall']:.3f}"
          f" ({len(use)} requests)")
