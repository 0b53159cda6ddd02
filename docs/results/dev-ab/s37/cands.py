"""Ids of a recorded run whose planning the wants check could change: the kept answer was the first (one raw),
its wants names a media kind no task makes, and the request's files (and conversation) have no such kind."""
import gzip, json, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.context import input_kinds
from hugginggpt.agent.plan.outputs import makes
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.tools.table import task_table
known = dict(task_table())
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
path = sys.argv[1]
d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
ids = []
for row in d['rows']:
    h = row['harness']
    if len(h.get('raw') or []) != 1:
        continue
    try:
        a = json.loads(h['raw'][0])
    except Exception:
        continue
    rid = str(row.get('id') or row.get('sample_id'))
    if d['set'] == 'real':
        it = reqs[rid]; ctx = " ".join([*(t['content'] for t in (it.history or [])), it.request, *(it.files or [])])
    else:
        ctx = h['request']
    given = input_kinds(ctx)
    tasks = [t['task'] for t in h['plan'] if t['task'] in known]
    if any(k in ('image', 'audio', 'video') and k not in given and not any(makes(known[t], k) for t in tasks)
           for k in (a.get('wants') or [])):
        ids.append(rid)
print(",".join(ids))
