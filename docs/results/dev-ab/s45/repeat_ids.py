"""The requests of a whole recorded part whose answers (any raw answer, or the plan kept) hold a step that
``repeats.repeat_cases`` asks about: the only requests the question can change (the answers are drawn alike again).

    python docs/results/dev-ab/s45/repeat_ids.py PART.json.gz   -> comma-separated ids"""
import gzip, json, sys
sys.path.insert(0, '.')
from hugginggpt.agent.plan.repeats import repeat_cases
from hugginggpt.tools.table import task_table

known = task_table()
ids = []
for r in json.load(gzip.open(sys.argv[1]))['rows']:
    h = r['harness']
    answers = [h.get('plan') or []]
    for raw in h.get('raw') or []:
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        answers.append(data.get('tasks') if isinstance(data, dict) else data)
    if any(isinstance(a, list) and repeat_cases(a, known) for a in answers):
        ids.append(str(r['id']))
print(','.join(ids))
