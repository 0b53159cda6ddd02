import json,sys,collections
sys.path.insert(0,'.')
from hugginggpt.eval.taskbench import load_taskbench
data=load_taskbench('/work/shared/taskbench'); gold={s.id:s for s in data.samples}
def f1(p,g):
    p,g=collections.Counter(p),collections.Counter(g)
    if not p and not g: return 1.0
    h=sum((p&g).values()); return 0 if not h else 2*h/(sum(p.values())+sum(g.values()))
def load(f): return {str(r['id']):r for r in json.load(open(f))['rows']}
en=load(sys.argv[1])
for f in sys.argv[2:]:
    o=load(f); ids=[i for i in o if i in en]
    nf=lambda r,i: f1([n['task'] for n in (r.get('result') or {}).get('task_nodes') or []],[n['task'] for n in gold[i].nodes])
    d=[nf(o[i],i)-nf(en[i],i) for i in ids]
    print(f, len(ids), round(sum(d)/len(d),3))
