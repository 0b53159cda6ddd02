"""Paired exact-task-list comparison of two planning result files, by gold plan size and language (bootstrap 95% CI)."""
import json, sys, random, collections
def load(f):
    d = json.load(open(f)); return {r.get('id') or r['harness'].get('id'): r for r in d['rows']}
def exact(r):
    h = r['harness']; return collections.Counter(t['task'] for t in h['plan']) == collections.Counter(h['gold'])
def size(r):
    n = len(r['harness']['gold']); return '0' if n == 0 else '1' if n == 1 else '2' if n == 2 else '3+'
def ci(diff):
    random.seed(0)
    boots = sorted(sum(random.choice(diff) for _ in diff) / len(diff) for _ in range(2000))
    return boots[50], boots[1949]
a, b = load(sys.argv[1]), load(sys.argv[2])
ids = [i for i in a if i in b]
groups = collections.defaultdict(list)
for i in ids:
    r = a[i]; lang = r.get('lang', 'en')
    for g in ('overall', 'size ' + size(r), 'lang ' + ('en' if lang == 'en' else 'other'), 'lang=' + lang):
        groups[g].append(i)
print(f"| group | n | A exact | B exact | B - A [95% CI] | won / lost |")
print("|---|---|---|---|---|---|")
order = ['overall', 'size 0', 'size 1', 'size 2', 'size 3+', 'lang en', 'lang other'] + sorted(g for g in groups if g.startswith('lang='))
for g in order:
    if g not in groups: continue
    gi = groups[g]; xa = [exact(a[i]) for i in gi]; xb = [exact(b[i]) for i in gi]
    diff = [int(y) - int(x) for x, y in zip(xa, xb)]; lo, hi = ci(diff)
    print(f"| {g} | {len(gi)} | {sum(xa)/len(gi):.3f} | {sum(xb)/len(gi):.3f} | {sum(diff)/len(gi):+.3f} [{lo:+.3f}, {hi:+.3f}] | {diff.count(1)} / {diff.count(-1)} |")
