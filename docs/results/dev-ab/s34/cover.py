"""Analysis: how much of the request the plan's step texts quote (character spans of >= 12 shared characters),
for plans missing steps against the others."""
import json, sys, difflib
from collections import Counter
def covered(req, steps, minlen=12):
    mark = [False] * len(req); low = req.lower()
    for s in steps:
        sm = difflib.SequenceMatcher(None, low, s.lower(), autojunk=False)
        for b in sm.get_matching_blocks():
            if b.size >= minlen:
                for k in range(b.a, b.a + b.size): mark[k] = True
    # longest uncovered run of the request's letters
    run = best = 0
    for c, m in zip(req, mark):
        if m: run = 0
        else:
            run += 1; best = max(best, run)
    letters = sum(1 for c in req if c.isalnum())
    cov = sum(1 for c, m in zip(req, mark) if m and c.isalnum()) / max(1, letters)
    return cov, best
for p in sys.argv[1:]:
    d = json.load(open(p)); groups = {}
    for r in d['rows']:
        h = r['harness']; g = Counter(h['gold']); o = Counter(t['task'] for t in h['plan'])
        miss = sum((g - o).values()); extra = sum((o - g).values())
        k = 'ok' if g == o else 'missing' if miss > extra else 'other'
        steps = [t.get('step') or '' for t in h['plan']]
        cov, gap = covered(h['request'], steps)
        groups.setdefault(k, []).append((cov, gap))
    for k, v in groups.items():
        v.sort(); n = len(v)
        print(p.split('/')[-1], k, n, 'coverage median %.2f' % v[n // 2][0], 'uncovered>=80 chars: %d' % sum(1 for c, g in v if g >= 80),
              'cov<0.4: %d' % sum(1 for c, g in v if c < 0.4))
