"""Paired comparison of two real-request planning result files (live runs or replays), by plan size and
language: exact task lists (paired difference, bootstrap 95% CI), n-F1 and e-F1 of each file.
Run from the repository root: python docs/results/dev-ab/s20/realab.py A.json B.json [--list]"""
import ast, collections, json, random, sys
sys.path.insert(0, '.')
from hugginggpt.eval.real_requests import load_real_requests, score_plans

def rows(path):
    out = {}
    for r in json.load(open(path))['rows']:
        h = r['harness']
        out[r['id']] = (r, ast.literal_eval(h) if isinstance(h, str) else h)
    return out

def size(n):
    return '0' if n == 0 else '1' if n == 1 else '2' if n == 2 else '3+'

def ci(diff):
    random.seed(0)
    boots = sorted(sum(random.choice(diff) for _ in diff) / len(diff) for _ in range(2000))
    return boots[50], boots[1949]

a, b = rows(sys.argv[1]), rows(sys.argv[2])
gold = {r.id: r.plan for r in load_real_requests('benchmarks/data/real_requests.jsonl')}
ids = [i for i in a if i in b]
groups = collections.defaultdict(list)
for i in ids:
    lang = a[i][0].get('lang', 'en')
    for g in ('overall', 'size ' + size(len(gold[i])), 'lang ' + ('en' if lang == 'en' else 'other'), 'lang=' + lang):
        groups[g].append(i)
exact = lambda h, i: collections.Counter(t['task'] for t in h['plan']) == collections.Counter(t['task'] for t in gold[i])
print('| group | n | A exact | B exact | B - A [95% CI] | won / lost | A n-F1 / e-F1 | B n-F1 / e-F1 |')
print('|---|---|---|---|---|---|---|---|')
order = ['overall', 'size 0', 'size 1', 'size 2', 'size 3+', 'lang en', 'lang other'] + sorted(g for g in groups if g.startswith('lang='))
for g in order:
    if g not in groups:
        continue
    gi = groups[g]
    xa = [exact(a[i][1], i) for i in gi]; xb = [exact(b[i][1], i) for i in gi]
    diff = [int(y) - int(x) for x, y in zip(xa, xb)]; lo, hi = ci(diff)
    sa = score_plans({i: gold[i] for i in gi}, {i: a[i][1]['plan'] for i in gi})
    sb = score_plans({i: gold[i] for i in gi}, {i: b[i][1]['plan'] for i in gi})
    print(f"| {g} | {len(gi)} | {sum(xa)/len(gi):.3f} | {sum(xb)/len(gi):.3f} | {sum(diff)/len(gi):+.3f} [{lo:+.3f}, {hi:+.3f}] "
          f"| {diff.count(1)} / {diff.count(-1)} | {sa['n_f1']:.3f} / {sa['e_f1']:.3f} | {sb['n_f1']:.3f} / {sb['e_f1']:.3f} |")
if '--list' in sys.argv:
    for i in ids:
        ea, eb = exact(a[i][1], i), exact(b[i][1], i)
        if ea != eb:
            print(('WON ' if eb else 'LOST'), i, a[i][1]['request'][:110].replace('\n', ' '))
            print('     A', [t['task'] for t in a[i][1]['plan']], ' B', [t['task'] for t in b[i][1]['plan']], ' gold', [t['task'] for t in gold[i]])
