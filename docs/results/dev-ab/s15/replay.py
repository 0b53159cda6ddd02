"""Replay a planning_quality result file through this checkout's planner: the recorded answers stand in for
the LLM, so a change to which answers are re-asked or kept is measured exactly, without LLM calls.
Run from the repository root: python docs/results/dev-ab/s15/replay.py IN.json OUT.json
VARIANT=nowants+nonempty (variants.py) applies a rule to the planner as it was before session 15;
REASK_LIVE=1 keeps the recorded first answers and asks the GGUF model for every re-ask (a changed re-ask prompt)."""
import asyncio, json, os, sys, tempfile
sys.path.insert(0, '.'); sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan import planner as P
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.llm.structured import ConstrainedCache
from langchain_core.language_models.fake_chat_models import FakeListChatModel

src, dst = sys.argv[1], sys.argv[2]
d = json.load(open(src))
if not os.environ.get('REASK_LIVE'):
    ConstrainedCache.get = lambda self, *a, **k: None
state = {}
_orig_ask = P._Attempt._ask
LIVE = os.environ.get('REASK_LIVE')
async def _ask(self, messages, config, stage, model=None):
    if LIVE and stage != 'planning':
        state['live'] = state.get('live', 0) + 1
        return await _orig_ask(self, messages, config, stage, model)
    raws = state['raws']
    i = len(self.raw_outputs)
    if i >= len(raws):
        state['missing'] = True
        raise P.PlanError('no recorded answer')
    raw = raws[i]
    self.raw_outputs.append(raw)
    return P.parse_plan_text(raw), []
P._Attempt._ask = _ask
import os
if os.environ.get('VARIANT'):
    import variants; variants.apply(P, os.environ['VARIANT'])
if os.environ.get('REASK_LIVE'):
    from hugginggpt.llm import load_llm
    llm = load_llm('gguf:' + pq.gguf_path('qwen2.5-coder-1.5b'), temperature=0.2, n_threads=2, n_ctx=8192)
else:
    llm = FakeListChatModel(responses=['x'])
tb = d['set'] == 'taskbench'
if tb:
    dataset = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(dataset.tools); tasks = mapping.domain_tasks()
else:
    reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
    from hugginggpt.tools.table import task_table
    tasks = list(task_table())
rows = []; missing = 0
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(llm, tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp)
    for row in d['rows']:
        h = row['harness']
        state.clear(); state['raws'] = h['raw']
        if tb:
            planned = asyncio.run(pq.plan_one(agent, h['request']))
        else:
            it = reqs[row['id']]
            planned = asyncio.run(pq.plan_one(agent, it.request, it.history, it.files))
        if state.get('missing'):
            missing += 1
        if not state.get('live'):
            planned['seconds'] = h['seconds']; planned['usage'] = h['usage']
        else:
            print(row['id'], 'live', [t['task'] for t in planned['plan']], 'gold', h['gold'], flush=True)
        if tb:
            new = mapping.plan_to_prediction(row['id'], planned['plan'])
        else:
            new = {k: v for k, v in row.items() if k != 'harness'}
        new['harness'] = {**h, **planned, 'replay_missing': bool(state.get('missing'))}
        rows.append(new)
if tb:
    summ = pq.taskbench_summary(dataset, rows)
else:
    summ = pq.real_summary([reqs[r['id']] for r in rows], rows)
out = {k: v for k, v in d.items() if k not in ('rows', 'scores', 'exact')}
out.update(summ); out['rows'] = rows; out['replay_missing'] = missing
json.dump(out, open(dst, 'w'), indent=1, ensure_ascii=False)
print(src, 'missing', missing)
