# vote.py of session 38 without the edge count (the test part's TaskBench links name tasks by number): exact and node F1 only.
"""Three draws of one planner (seeds 0, 1, 2 at temperature 0.2), the plan most of them agree on (its task names
and the names along its edges), else the first draw's: how often that plan's task list is the gold's, against
the first draw alone (paired, bootstrap interval), by plan size and language. The third draw is planned only
for the requests where the first two disagree (where it decides); elsewhere the two agreeing draws are the vote.
Usage: vote.py SEED0.json[.gz] SEED1.json[.gz] SEED2-on-disagreements.json[.gz]"""
import gzip, json, random, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests

reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}


def load(path):
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    return {str(r['id']): r['harness'] for r in d['rows']}


def f1(pred, gold):
    p, g = Counter(pred), Counter(gold)
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def gold_edges(h, sample):
    """The gold's edges by task names: the recorded plan's when the harness keeps it, else TaskBench's links."""
    if sample is not None:
        norm = lambda n: n.lower().replace(' ', '-')
        return tuple(sorted((norm(e['source']), norm(e['target'])) for e in sample['task_links']))
    return None


def interval(diff):
    random.seed(0)
    n = len(diff)
    boots = sorted(sum(random.choice(diff) for _ in range(n)) / n for _ in range(2000))
    return f"{sum(diff) / n:+.3f} [{boots[50]:+.3f}, {boots[1949]:+.3f}]"


def key(h):
    plan = h.get('plan') or []
    names = {t['id']: t['task'] for t in plan}
    edges = sorted((names.get(d), t['task']) for t in plan for d in t.get('dep') or [])
    return tuple(sorted(names.values())), tuple(edges)


runs = [load(p) for p in sys.argv[1:4]]
samples = {}
if False:
    for line in open(pq.TASKBENCH / 'data.json'):
        sample = json.loads(line)
        samples[str(sample['id'])] = sample
first, second, third = runs
rows = []
for rid, h in first.items():
    gold = tuple(sorted(h['gold']))
    draws = [key(h), key(second[rid])] + ([key(third[rid])] if rid in third else [])
    top, count = Counter(draws).most_common(1)[0]
    voted = top if count >= 2 else draws[0]
    lang = reqs[rid].lang if rid in reqs else 'en'  # TaskBench's requests are English
    rows.append(dict(id=rid, size=len(gold), lang=lang, base=draws[0][0] == gold, vote=voted[0] == gold,
                     seed1=draws[1][0] == gold, disagree=draws[0] != draws[1], third=rid in third,
                     node=(f1(draws[0][0], gold), f1(voted[0], gold)),
                     edge=None if rid not in samples else (f1(draws[0][1], gold_edges(h, samples[rid])),
                                                           f1(voted[1], gold_edges(h, samples[rid])))))
n = len(rows)
diff = [r['vote'] - r['base'] for r in rows]
random.seed(0)
boots = sorted(sum(random.choice(diff) for _ in range(n)) / n for _ in range(2000))
print(f"n {n}; first draw {sum(r['base'] for r in rows) / n:.3f}, second {sum(r['seed1'] for r in rows) / n:.3f}, "
      f"vote {sum(r['vote'] for r in rows) / n:.3f}; diff {sum(diff) / n:+.3f} [{boots[50]:+.3f}, {boots[1949]:+.3f}]; "
      f"won {diff.count(1)} lost {diff.count(-1)}; first two disagree {sum(r['disagree'] for r in rows)}, "
      f"third draws {sum(r['third'] for r in rows)}")
print("node F1 per request, vote - first:", interval([r['node'][1] - r['node'][0] for r in rows]))
if samples:
    print("edge F1 per request (TaskBench's links), vote - first:", interval([r['edge'][1] - r['edge'][0] for r in rows]))
for name, pick in (("one task", lambda r: r['size'] == 1), ("two tasks", lambda r: r['size'] == 2),
                   ("three or more", lambda r: r['size'] >= 3), ("English", lambda r: r['lang'] == 'en'),
                   ("other languages", lambda r: r['lang'] != 'en')):
    part = [r for r in rows if pick(r)]
    if part:
        print(f"  {name}: n {len(part)} first {sum(r['base'] for r in part) / len(part):.3f} "
              f"vote {sum(r['vote'] for r in part) / len(part):.3f}")
print("won:", [r['id'] for r in rows if r['vote'] > r['base']], "lost:", [r['id'] for r in rows if r['vote'] < r['base']])
