"""Paired per-request node and edge F1 of two TaskBench planning result files (same ids), bootstrap 95% CI.

Per-request F1 over task names (multiset) and over links (name pairs), from each row's ``result`` against the
sample's gold graph; the corpus figures of planning_quality.py are micro-averaged and differ slightly."""
import collections, gzip, json, random, sys

sys.path.insert(0, '.')
from hugginggpt.eval.taskbench import load_taskbench


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    return {str(r['id']): r for r in json.load(op(path, 'rt'))['rows']}


def f1(pred, gold):
    p, g = collections.Counter(pred), collections.Counter(gold)
    if not p and not g:
        return 1.0
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def graph(result):
    nodes = [n['task'] for n in result.get('task_nodes') or []]
    links = [(l['source'], l['target']) for l in result.get('task_links') or []]
    return nodes, links


def ci(diff):
    random.seed(0)
    boots = sorted(sum(random.choice(diff) for _ in diff) / len(diff) for _ in range(2000))
    return boots[50], boots[1949]


data = load_taskbench(sys.argv[3] if len(sys.argv) > 3 else '../shared/taskbench')
gold = {s.id: s for s in data.samples}
a, b = load(sys.argv[1]), load(sys.argv[2])
ids = [i for i in a if i in b and i in gold]
for name, pick in (('node', 0), ('edge', 1)):
    diff, won, lost = [], 0, 0
    for i in ids:
        g = graph({'task_nodes': gold[i].nodes, 'task_links': gold[i].links})[pick]
        x = f1(graph(a[i].get('result') or {})[pick], g)
        y = f1(graph(b[i].get('result') or {})[pick], g)
        diff.append(y - x); won += y > x; lost += y < x
    lo, hi = ci(diff)
    print(f"{name} F1 per request: B - A {sum(diff)/len(diff):+.3f} [{lo:+.3f}, {hi:+.3f}], {won} won / {lost} lost, n={len(ids)}")
