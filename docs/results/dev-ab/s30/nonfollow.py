"""Rows of a planning_quality result whose recorded first answer cannot be written under this checkout's
plan grammar for its request (those must be planned again live)."""
import json, sys
sys.path.insert(0, '.')
from tests.agent.conftest import follows
from hugginggpt.agent.plan.context import request_inputs
from hugginggpt.agent.plan.parse import plan_schema, parse_plan_text
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.tools.table import task_table
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.agent.plan.prompt import request_context
d = json.load(open(sys.argv[1]))
tb = d['set'] == 'taskbench'
if tb:
    known = TaskBenchMapping(load_taskbench('/work/shared/taskbench').tools).domain_specs()
else:
    known = dict(task_table()); reqs = {r.id: r for r in load_real_requests('benchmarks/data/real_requests.jsonl')}
out = []
for row in d['rows']:
    h = row['harness']
    if tb:
        context, files = h['request'], ()
    else:
        r = reqs[row['id']]; context = request_context(r.request, r.files, r.history); files = tuple(r.files)
    schema = plan_schema(known, request_inputs(context, files))
    try:
        data = parse_plan_text(h['raw'][0])
    except Exception:
        continue
    steps = data.get('tasks', data) if isinstance(data, dict) else data
    if not follows(schema, steps):
        out.append(row['id']); print(row['id'], [s.get('task') for s in steps])
print(len(out), 'of', len(d['rows']))
