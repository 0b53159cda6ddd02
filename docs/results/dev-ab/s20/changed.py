"""The requests whose plans differ between two planning result files (live runs or replays): request, both
task lists and the gold. Run from the repository root: python docs/results/dev-ab/s20/changed.py A.json B.json"""
import ast, json, sys


def rows(path):
    out = {}
    for r in json.load(open(path))['rows']:
        h = r['harness']
        h = ast.literal_eval(h) if isinstance(h, str) else h
        out[r.get('id') or h.get('id')] = h
    return out


a, b = rows(sys.argv[1]), rows(sys.argv[2])
changed = 0
for i in a:
    plan_a = [(t['task'], json.dumps(t.get('args'), sort_keys=True)) for t in a[i]['plan']]
    plan_b = [(t['task'], json.dumps(t.get('args'), sort_keys=True)) for t in b[i]['plan']]
    if plan_a != plan_b:
        changed += 1
        print(i, a[i]['request'][:120].replace('\n', ' '))
        print('   A', [t['task'] for t in a[i]['plan']])
        print('   B', [t['task'] for t in b[i]['plan']])
        print('   gold', a[i].get('gold'))
print('changed', changed, 'of', len(a))
