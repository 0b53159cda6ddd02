"""Requests of a planning_quality run whose raw answers validate differently with PlanContext.made_from: the only requests session 40's first change can move (usage: python docs/results/dev-ab/s40/cands.py RUN.json[.gz])."""
import gzip, json, sys
from dataclasses import replace
sys.path.insert(0, '.')
from hugginggpt.agent.plan.context import PlanContext
from hugginggpt.agent.plan.parse import parse_plan_text
from hugginggpt.agent.plan.passes import validated
from hugginggpt.tools import task_table
known = dict(task_table())
path = sys.argv[1]
d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
out = []
for x in d['rows']:
    h = x.get('harness', x)
    for raw in h.get('raw') or []:
        try:
            data = parse_plan_text(raw)
            ctx = PlanContext.of(known, h['request'])
            a = validated(data, ctx)[0]; b = validated(data, replace(ctx, made_from=True))[0]
        except Exception as e:
            continue
        if a != b:
            out.append(str(x['id'])); break
print(','.join(out))
