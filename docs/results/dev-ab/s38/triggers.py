"""The vote of s38/vote.py under three triggers (always; the first plan has two or more tasks; the first answer had
a narrow task-name choice asked about), counted on the recorded draws: extra planning calls a request, and exact
task list and node F1 per request against the first draw (paired, bootstrap interval). Run from the repository root."""
import gzip, json, random
from collections import Counter


def load(p):
    d = json.load(gzip.open(p) if p.endswith('.gz') else open(p))
    return {str(r['id']): r['harness'] for r in d['rows']}


def key(h):
    plan = h.get('plan') or []
    names = {t['id']: t['task'] for t in plan}
    return tuple(sorted(names.values())), tuple(sorted((names.get(d), t['task']) for t in plan for d in t.get('dep') or []))


def f1(p, g):
    p, g = Counter(p), Counter(g)
    h = sum((p & g).values())
    return 0 if not h else 2 * h / (sum(p.values()) + sum(g.values()))


def interval(xs):
    random.seed(0)
    n = len(xs)
    b = sorted(sum(random.choice(xs) for _ in range(n)) / n for _ in range(2000))
    return f"{sum(xs) / n:+.3f} [{b[50]:+.3f}, {b[1949]:+.3f}]"


S = 'docs/results/dev-ab/'
SETS = [('real', (S + 's36/live-base-real-dev.json.gz', S + 's38/live-seed1-real-dev.json.gz', S + 's38/live-seed2dis-real-dev.json.gz')),
        ('taskbench', (S + 's36/live-base-tb-dev90.json.gz', S + 's38/live-seed1-tb-dev90.json.gz', S + 's38/live-seed2dis-tb-dev90.json.gz'))]
TRIGGERS = [('always', lambda h: True), ('two or more tasks', lambda h: len(h.get('plan') or []) >= 2),
            ('a narrow name asked about', lambda h: (h.get('usage') or {}).get('choice_checks', 0) > 0)]
for name, files in SETS:
    a, b, c = [load(f) for f in files]
    for trigger, fires in TRIGGERS:
        exact, node, calls = [], [], 0
        for i, h in a.items():
            gold = tuple(sorted(x.lower().replace(' ', '-') for x in h['gold']))
            shapes = [key(h), key(b[i])] + ([key(c[i])] if i in c else [])
            voted = shapes[0]
            if fires(h):
                calls += 1 + (len(shapes) == 3)
                top, count = Counter(shapes).most_common(1)[0]
                voted = top if count >= 2 else shapes[0]
            exact.append((voted[0] == gold) - (shapes[0][0] == gold))
            node.append(f1(voted[0], gold) - f1(shapes[0][0], gold))
        print(name, trigger, 'extra calls', round(calls / len(exact), 2), 'exact', interval(exact),
              'won', exact.count(1), 'lost', exact.count(-1), 'node F1', interval(node))
