"""Replay a recorded planning_quality run whose answers' close calls were recorded beside it (``s33/closecalls.py``):
the recorded answers stand in for the LLM, and each answer's narrow task choices are asked about as the planner
does (``choices.check_choices``), with the GGUF model scoring the questions live. Measures a change to the choice
check on exactly the same answers (session 35). Run from the root of the planner measured:
python replaycc.py RUN.json RUN.json.close.json OUT.json"""
import asyncio, json, os, sys, tempfile
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan import planner as P
from hugginggpt.agent.plan.choices import check_choices
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.llm.structured import ConstrainedCache
from langchain_core.language_models.fake_chat_models import FakeListChatModel

src, close_file, dst = sys.argv[1:4]
d = json.load(open(src))
close = {e['text']: e['close'] for e in json.load(open(close_file))}
ConstrainedCache.get = lambda self, *a, **k: None
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
state = {}
asked_total = [0]


async def _ask(self, messages, config, stage, model=None):
    raws = state['raws']
    i = len(self.raw_outputs)
    if i >= len(raws):
        state['missing'] = True
        raise P.PlanError('no recorded answer')
    raw = raws[i]
    self.raw_outputs.append(raw)
    data = P.parse_plan_text(raw)
    calls = close.get(raw)
    if not calls:
        return data, []
    data, repairs, asked = await check_choices(scorer, self.words, raw, data, calls, self.tasks)
    asked_total[0] += asked
    self.choices_asked += asked
    return data, repairs
P._Attempt._ask = _ask

tb = d['set'] == 'taskbench'
if tb:
    dataset = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(dataset.tools); tasks = mapping.domain_specs()
else:
    reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
    from hugginggpt.tools.table import task_table
    tasks = list(task_table())
rows = []; missing = 0
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(FakeListChatModel(responses=['x']), tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp)
    for row in d['rows']:
        h = row['harness']
        state.clear(); state['raws'] = h['raw']
        if tb:
            planned = asyncio.run(pq.plan_one(agent, h['request']))
        else:
            it = reqs[row['id']]
            planned = asyncio.run(pq.plan_one(agent, it.request, it.history, it.files))
        missing += bool(state.get('missing'))
        planned['seconds'] = h['seconds']; planned['usage'] = h['usage']
        new = mapping.plan_to_prediction(row['id'], planned['plan']) if tb else {k: v for k, v in row.items() if k != 'harness'}
        new['harness'] = {**h, **planned, 'replay_missing': bool(state.get('missing'))}
        rows.append(new)
summ = pq.taskbench_summary(dataset, rows) if tb else pq.real_summary([reqs[r['id']] for r in rows], rows)
out = {k: v for k, v in d.items() if k not in ('rows', 'scores', 'exact')}
out.update(summ); out['rows'] = rows; out['replay_missing'] = missing; out['choices_asked'] = asked_total[0]
json.dump(out, open(dst, 'w'), indent=1, ensure_ascii=False)
print(src, 'missing', missing, 'asked', asked_total[0])
