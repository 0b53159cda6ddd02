"""Replay a recorded planning_quality run through this checkout's planner with the narrow-choice questions' recorded
outcomes applied: the recorded answers stand in for the LLM (as in ``s15/replay.py``), and each task name the
recorded run changed after asking about it alone (a ``choice`` repair: "the planner chose X over Y ...; it picks
Y") is changed the same way in the answer holding that task. With the prompt unchanged, this is the current
planner's plan for the same answers: a change to the passes is measured on a live run's answers, choice check
included, without planning again (session 35). Run from the repository root:
python replaychoices.py IN.json OUT.json

With ``--close IN.json.close.json`` (the answers' close calls, recorded by ``s33/closecalls.py``) the narrow
choices are instead asked about as the planner asks them, the GGUF model scoring the questions live: a change to
the choice check itself measured on the same answers."""
import asyncio, json, os, re, sys, tempfile
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan import planner as P
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.llm.structured import ConstrainedCache
from langchain_core.language_models.fake_chat_models import FakeListChatModel

args = sys.argv[1:]
close = None
if '--close' in args:
    at = args.index('--close'); close = {e['text']: e['close'] for e in json.load(open(args[at + 1]))}; del args[at:at + 2]
src, dst = args[:2]
d = json.load(open(src))
if close is not None:
    from hugginggpt.agent.plan.choices import check_choices
    from hugginggpt.llm.llamacpp import LlamaCppChatModel
    scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
ConstrainedCache.get = lambda self, *a, **k: None
CHOSE = re.compile(r"the planner chose (\S+) over (\S+) by a narrow margin")
state = {}


async def _ask(self, messages, config, stage, model=None):
    raws = state['raws']
    i = len(self.raw_outputs)
    if i >= len(raws):
        state['missing'] = True
        raise P.PlanError('no recorded answer')
    raw = raws[i]
    self.raw_outputs.append(raw)
    data = P.parse_plan_text(raw)
    if close is not None:  # the questions asked live from the answer's close calls
        if not close.get(raw):
            return data, []
        data, repairs, asked = await check_choices(scorer, self.words, raw, data, close[raw], self.tasks)
        self.choices_asked += asked
        return data, repairs
    tasks = data.get('tasks') if isinstance(data, dict) else data
    repairs = []
    for rep in state['choices']:
        for t in tasks or []:
            if isinstance(t, dict) and t.get('id') == rep['task_id'] and t.get('task') == rep['chosen']:
                t['task'] = rep['pick']
                t['args'] = {k: v for k, v in (t.get('args') or {}).items() if self.tasks[rep['pick']].find_arg(k) is not None}
                repairs.append({k: rep[k] for k in ('task_id', 'pass', 'reason')})
    return data, repairs
P._Attempt._ask = _ask

tb = d['set'] == 'taskbench'
if tb:
    dataset = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(dataset.tools); tasks = mapping.domain_specs()
    translated = {}
    if d.get('requests_file'):
        for line in open(d['requests_file']):
            if line.strip():
                row = json.loads(line); translated[str(row['id'])] = row['user_request']
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
        state['choices'] = [{**r, 'chosen': m.group(1), 'pick': m.group(2)} for r in h['repairs']
                            if r.get('pass') == 'choice' and (m := CHOSE.search(r['reason']))]
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
out.update(summ); out['rows'] = rows; out['replay_missing'] = missing
json.dump(out, open(dst, 'w'), indent=1, ensure_ascii=False)
print(src, 'missing', missing)
