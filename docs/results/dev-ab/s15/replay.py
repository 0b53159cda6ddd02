"""Replay a planning_quality result file through this checkout's planner: the recorded answers stand in for
the LLM, so a change to which answers are re-asked or kept is measured exactly, without LLM calls.
Run from the repository root: python docs/results/dev-ab/s15/replay.py IN.json OUT.json
VARIANT=nowants+nonempty (variants.py) applies a rule to the planner as it was before session 15;
REASK_LIVE=1 keeps the recorded first answers and asks the GGUF model for every re-ask (a changed re-ask prompt).
MISSING_LIVE=1 asks the GGUF model only for the answers the recording lacks (a plan newly re-asked); with
LIVE_IDS=FILE, also for every answer of the rows FILE names (a first answer the current grammar would not allow).
WANTS_RESAMPLE=T: a kept plan that makes none of a kind its answer says is wanted is asked again (the same prompt,
temperature T, another seed) and replaced by the new answer when that one delivers what it says and needs no re-ask.
RESAMPLE_NOTE=1 (with RESAMPLE=T): the first prompt with the error added to the request, sampled afresh.
RESAMPLE_KEEP_ERROR=1 (with RESAMPLE=T): the re-ask message as it is, sampled at temperature T with another seed.
RESAMPLE=T (with REASK_LIVE=1): the planner's re-ask replaced by the first prompt again, sampled at temperature T
with seed 1 (the error not shown; the planner does this itself since session 23, whose second ask,
'planning-redraw', the switch leaves as it is).
WANTS_RESAMPLE, RESAMPLE_NOTE and RESAMPLE_KEEP_ERROR are session 23's variants of it that were not kept."""
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
if not (os.environ.get('REASK_LIVE') or os.environ.get('MISSING_LIVE')):
    ConstrainedCache.get = lambda self, *a, **k: None
state = {}
_orig_ask = P._Attempt._ask
LIVE = os.environ.get('REASK_LIVE')
MISSING_LIVE = os.environ.get('MISSING_LIVE')  # only the answers the recording lacks are asked of the GGUF model
# LIVE_IDS=FILE (with MISSING_LIVE=1): the rows named in FILE (one id a line) are planned live from the start
LIVE_IDS = set(open(os.environ['LIVE_IDS']).read().split()) if os.environ.get('LIVE_IDS') else set()
async def _ask(self, messages, config, stage, model=None):
    if LIVE and stage != 'planning':
        state['live'] = state.get('live', 0) + 1
        if stage == 'planning-resample' or (os.environ.get('RESAMPLE') and stage == 'planning-reask'):
            state['resample'] = True
            if stage == 'planning-resample':
                try:
                    return await _orig_ask(self, messages, config, stage, model)
                finally:
                    state['resample'] = False
            if os.environ.get('RESAMPLE_NOTE'):  # the request again, the error said after it (no failed answer shown)
                from langchain_core.messages import HumanMessage
                error = messages[-1].content.split('\n')[0].removeprefix('Your plan could not be used: ')
                asked = [*messages[:-3], HumanMessage(messages[-3].content + '\n\n(A plan for this request could not be used: ' + error + ')')]
            else:
                asked = messages if os.environ.get('RESAMPLE_KEEP_ERROR') else messages[:-2]
            try:  # RESAMPLE_KEEP_ERROR: the re-ask's own messages (the error shown), sampled afresh
                return await _orig_ask(self, asked, config, stage)
            finally:
                state['resample'] = False
        return await _orig_ask(self, messages, config, stage, model)
    raws = state['raws']
    i = len(self.raw_outputs)
    if i >= len(raws) and MISSING_LIVE:
        state['live'] = state.get('live', 0) + 1
        return await _orig_ask(self, messages, config, stage, model)
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
if os.environ.get('WANTS_RESAMPLE'):
    os.environ.setdefault('TEMP', os.environ['WANTS_RESAMPLE'])
    _orig_run = P._Attempt.run
    async def _run(self, messages, config):
        ans = await self._choose(messages, config)
        if ans.plan.tasks and ans.wants and P.undelivered(ans.plan, ans.wants, self.tasks):
            try:
                second = self._validate(await self._ask(messages, config, 'planning-resample'))
            except P.PlanError:
                second = None
            if (second is not None and second.plan.tasks and self._error(second) is None
                    and not P.undelivered(second.plan, second.wants or [], self.tasks)):
                second.repairs = [{'task_id': None, 'pass': 'planner', 'reason': 'resampled: the first plan made none of a wanted kind'}, *second.repairs]
                ans = second
        return self._noted(ans)
    P._Attempt.run = _run
if os.environ.get('RESAMPLE') or os.environ.get('WANTS_RESAMPLE'):
    from hugginggpt.llm import llamacpp as _lc
    _orig_params = _lc.LlamaCppChatModel._params
    def _params(self, stop, kwargs):
        p = _orig_params(self, stop, kwargs)
        if state.get('resample'):
            p['temperature'] = float(os.environ.get('RESAMPLE') or os.environ['TEMP']); p['seed'] = 1
        return p
    _lc.LlamaCppChatModel._params = _params
if LIVE or MISSING_LIVE:
    from hugginggpt.llm import load_llm
    llm = load_llm('gguf:' + pq.gguf_path('qwen2.5-coder-1.5b'), temperature=0.2, n_threads=2, n_ctx=8192)
else:
    llm = FakeListChatModel(responses=['x'])
tb = d['set'] == 'taskbench'
if tb:
    dataset = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(dataset.tools); tasks = mapping.domain_specs()
else:
    reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
    from hugginggpt.tools.table import task_table
    tasks = list(task_table())
rows = []; missing = 0
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(llm, tools=placeholder_tools(tasks, root=tmp), workspace_root=tmp)
    for row in d['rows']:
        h = row['harness']
        state.clear(); state['raws'] = [] if row['id'] in LIVE_IDS else h['raw']
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
