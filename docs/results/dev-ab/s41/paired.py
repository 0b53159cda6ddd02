"""Paired comparison of two planning_quality.py result files on the real requests (exact task list, node F1, per
request), the rows of FULL standing for requests that NEW did not plan; bootstrap 95% interval, won / lost, by plan
size and language.

    python docs/results/dev-ab/s41/paired.py BASE NEW [FULL]
Run from the repository root."""
import collections, gzip, json, random, sys
sys.path.insert(0, '.')
from hugginggpt.eval.real_requests import load_real_requests
from benchmarks import planning_quality as pq


def rows(path):
    opened = gzip.open(path) if path.endswith('.gz') else open(path, encoding='utf-8')
    return {str(r['id']): r for r in json.load(opened)['rows']}


def f1(pred, gold):
    p, g = collections.Counter(pred), collections.Counter(gold)
    if not p and not g:
        return 1.0
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def ci(diffs, n=5000, seed=0):
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(n))
    return means[int(0.025 * n)], means[int(0.975 * n) - 1]


reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
base, new = rows(sys.argv[1]), rows(sys.argv[2])
full = rows(sys.argv[3]) if len(sys.argv) > 3 else {}
ids = sorted(set(base) | set(full)) if full else sorted(base)
ids = [i for i in ids if i in new or i in full]
out = collections.defaultdict(list)
for i in ids:
    gold = [t['task'] for t in reqs[i].plan]
    b = base.get(i, full.get(i))
    n = new.get(i, b)
    bp = [t['task'] for t in b['harness']['plan'] or []]
    np_ = [t['task'] for t in n['harness']['plan'] or []]
    ex = (sorted(np_) == sorted(gold)) - (sorted(bp) == sorted(gold))
    nf = f1(np_, gold) - f1(bp, gold)
    size = len(gold)
    for key in ('all', f"tasks:{'3+' if size >= 3 else size}", 'en' if reqs[i].lang == 'en' else 'other'):
        out[key].append((i, ex, nf, sorted(bp) == sorted(gold)))
    if ex or abs(nf) > 1e-9:
        print(i, 'exact', ex, 'nF1 %+.3f' % nf, 'base', bp, 'new', np_, 'gold', gold)
for key, vals in sorted(out.items()):
    ex = [v[1] for v in vals]; nf = [v[2] for v in vals]
    before = sum(v[3] for v in vals) / len(vals)
    lo, hi = ci(ex)
    print(f"{key:9s} n={len(vals):3d} exact {before:.3f} -> {before + sum(ex) / len(ex):.3f} "
          f"{sum(ex) / len(ex):+.3f} [{lo:+.3f}, {hi:+.3f}] won {sum(e > 0 for e in ex)} lost {sum(e < 0 for e in ex)}; "
          f"node F1 {sum(nf) / len(nf):+.3f} [{ci(nf)[0]:+.3f}, {ci(nf)[1]:+.3f}]")
