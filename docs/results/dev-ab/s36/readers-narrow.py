import gzip,json,sys,collections
sys.path.insert(0,'.')
from hugginggpt.agent.plan import choices as C
from hugginggpt.tools.table import task_table
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.eval.mapping import TaskBenchMapping
from benchmarks import planning_quality as pq
real={r.id:[t['task'] for t in r.plan] for r in load_real_requests('benchmarks/data/real_requests.jsonl')}
for closef, runf, tb in [('docs/results/dev-ab/s33/cc100.close.json.gz','docs/results/dev-ab/s33/cc100.json.gz',False),('docs/results/dev-ab/s34/cc-tb-dev90.close.json.gz','docs/results/dev-ab/s34/cc-tb-dev90.json.gz',True)]:
    known = dict(TaskBenchMapping(load_taskbench(pq.TASKBENCH).tools).domain_specs()) if tb else task_table()
    rows=json.load(gzip.open(runf,'rt'))['rows']; byraw={}
    for r in rows:
        for raw in r['harness']['raw']: byraw[raw]=r
    n=0
    for e in json.load(gzip.open(closef,'rt')):
        r=byraw.get(e['text'])
        try: data=json.loads(e['text'])
        except Exception: continue
        new=C.narrow_choices(e['text'],e['close'],data,known)
        f=C._fitting; C._fitting=lambda *a: []
        old=C.narrow_choices(e['text'],e['close'],data,known); C._fitting=f
        if new!=old:
            n+=1
            gold = r['harness'].get('gold') if r else None
            print(r['id'] if r else '?', [ (c.chosen,c.others) for c in new if c not in old], 'gold', gold)
    print(closef, 'answers with new choices', n)

# ask the new ones live
from hugginggpt.llm.llamacpp import LlamaCppChatModel
sc=LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
for closef, runf, tb in [('docs/results/dev-ab/s33/cc100.close.json.gz','docs/results/dev-ab/s33/cc100.json.gz',False),('docs/results/dev-ab/s34/cc-tb-dev90.close.json.gz','docs/results/dev-ab/s34/cc-tb-dev90.json.gz',True)]:
    known = dict(TaskBenchMapping(load_taskbench(pq.TASKBENCH).tools).domain_specs()) if tb else task_table()
    rows=json.load(gzip.open(runf,'rt'))['rows']; byraw={}
    for r in rows:
        for raw in r['harness']['raw']: byraw[raw]=r
    for e in json.load(gzip.open(closef,'rt')):
        r=byraw.get(e['text'])
        try: data=json.loads(e['text'])
        except Exception: continue
        new=C.narrow_choices(e['text'],e['close'],data,known)
        f=C._fitting; C._fitting=lambda *a: []
        old=C.narrow_choices(e['text'],e['close'],data,known); C._fitting=f
        for c in new:
            if c in old: continue
            t=data['tasks'][c.index]
            others=[o for o in c.others if C.swappable(t.get('args') or {}, known[c.chosen], known[o])]
            pick=C.picked(sc, r['harness']['request'], t.get('step') or c.chosen, [c.chosen,*others], known)
            print('ASKED', r['id'], c.chosen, others, '->', pick)
