"""Paired per-request node/edge F1 and exact of two TaskBench planning result files (bootstrap 95% CI), by type."""
import json, os, sys, random, collections
gold = {}
for line in open(os.path.join(os.environ.get('HUGGINGGPT_SHARED', '../shared'), 'taskbench', 'data.json')):
    x = json.loads(line); gold[x['id']] = x
def f1(p, g):
    p, g = collections.Counter(p), collections.Counter(g)
    if not p and not g: return 1.0
    tp = sum((p & g).values()); 
    return 0.0 if tp == 0 else 2 * tp / (sum(p.values()) + sum(g.values()))
def per(r):
    g = gold[r['id']]; res = r['result']
    n = f1([x['task'] for x in res['task_nodes']], [x['task'] for x in g['task_nodes']])
    e = f1([(l['source'], l['target']) for l in res['task_links']], [(l['source'], l['target']) for l in g['task_links']])
    return n, e
def load(f): return {r['id']: r for r in json.load(open(f))['rows']}
a, b = load(sys.argv[1]), load(sys.argv[2])
ids = [i for i in a if i in b and i in gold]
def ci(d):
    random.seed(0); bs = sorted(sum(random.choice(d) for _ in d) / len(d) for _ in range(2000)); return bs[50], bs[1949]
for typ in ('all', 'single', 'chain', 'dag', 'multi'):
    gi = [i for i in ids if typ == 'all' or gold[i]['type'] == typ or (typ == 'multi' and gold[i]['type'] != 'single')]
    if not gi: continue
    for k, name in ((0, 'n-F1'), (1, 'e-F1')):
        if k == 1 and typ == 'single': continue
        xa = [per(a[i])[k] for i in gi]; xb = [per(b[i])[k] for i in gi]; d = [y - x for x, y in zip(xa, xb)]
        lo, hi = ci(d)
        print(f"{typ:6} {name} n={len(gi)} {sum(xa)/len(gi):.3f} -> {sum(xb)/len(gi):.3f}  {sum(d)/len(gi):+.3f} [{lo:+.3f}, {hi:+.3f}] won/lost {sum(x>0 for x in d)}/{sum(x<0 for x in d)}")
