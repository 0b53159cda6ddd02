"""Plan a few TaskBench requests of a replayed run live (their second ask missing from the recording), session 35.
Run from a snapshot of the planner: python planlive.py ID ..."""
import asyncio, json, sys, tempfile
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.llm import load_llm
rec = {r['id']: r for r in json.load(open('/tmp/rc2-tb-zh.json'))['rows']}
ds = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(ds.tools); tasks = mapping.domain_specs()
llm = load_llm('gguf:' + pq.gguf_path('qwen2.5-coder-1.5b'), temperature=0.2, n_threads=2, n_ctx=8192)
out = []
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(llm, tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp)
    for i in sys.argv[1:]:
        h = rec[i]['harness']
        planned = asyncio.run(pq.plan_one(agent, h['request']))
        same_first = planned['raw'][:1] == h['raw'][:1]
        print(i, [t['task'] for t in planned['plan']], 'gold', h['gold'], 'first answer as recorded:', same_first, flush=True)
        out.append({'id': i, **planned, 'gold': h['gold']})
json.dump(out, open('/tmp/s35-prod-tbzh2.json', 'w'), ensure_ascii=False, indent=1)
