"""Per-request n-F1 of English (replay) vs Chinese (live) TaskBench dev plans, and the requests Chinese loses. Run from the repository root: python docs/results/dev-ab/s22/langgap.py EN.json ZH.json (HUGGINGGPT_SHARED: ../shared)"""
import json, sys, collections, random
gold = {}
for line in open(__import__('os').path.join(__import__('os').environ.get('HUGGINGGPT_SHARED', '../shared'), 'taskbench', 'data.json')):
    x = json.loads(line); gold[x['id']] = x
def nodes(ns): return collections.Counter(n['task'] for n in ns)
def f1(p, g):
    tp = sum((p & g).values()); 
    if not p and not g: return 1.0
    if tp == 0: return 0.0
    pr, rc = tp / sum(p.values()), tp / sum(g.values()); return 2 * pr * rc / (pr + rc)
en = {r['id']: r for r in json.load(open(sys.argv[1]))['rows']}
zh = {r['id']: r for r in json.load(open(sys.argv[2]))['rows']}
ids = [i for i in zh if i in en]
d = []; kinds = collections.Counter(); rows = []
for i in ids:
    g = nodes(gold[i]['task_nodes']); pe = nodes(en[i]['result']['task_nodes']); pz = nodes(zh[i]['result']['task_nodes'])
    fe, fz = f1(pe, g), f1(pz, g); d.append(fz - fe)
    if fz < fe:
        ze = sum(pz.values()); ee = sum(pe.values())
        kinds['zh fewer tasks' if ze < ee else 'zh more tasks' if ze > ee else 'zh other tasks'] += 1
        rows.append((i, gold[i]['type'], fe, fz, [t['task'] for t in en[i]['harness']['plan']], [t['task'] for t in zh[i]['harness']['plan']]))
random.seed(0)
boots = sorted(sum(random.choice(d) for _ in d) / len(d) for _ in range(2000))
print(f"n={len(ids)} en n-F1 {sum(f1(nodes(en[i]['result']['task_nodes']), nodes(gold[i]['task_nodes'])) for i in ids)/len(ids):.3f} "
      f"zh {sum(f1(nodes(zh[i]['result']['task_nodes']), nodes(gold[i]['task_nodes'])) for i in ids)/len(ids):.3f} "
      f"paired {sum(d)/len(d):+.3f} [{boots[50]:+.3f}, {boots[1949]:+.3f}] zh worse {sum(x < 0 for x in d)} better {sum(x > 0 for x in d)}")
print(dict(kinds))
for r in rows: print(r)
