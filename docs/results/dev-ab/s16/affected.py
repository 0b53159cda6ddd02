"""Rows of a planning result file whose recorded answers have a step after the first with a media argument
(the only places a later-steps schema change can alter the model's tokens). Prints the count; writes ids."""
import json, sys, re
sys.path.insert(0, '.')
from hugginggpt.tools.table import task_table
media = {s.name: {a.name for a in s.args if a.is_media} for s in task_table().values()}
d = json.load(open(sys.argv[1])); ids = []
for r in d['rows']:
    hit = False
    for raw in r['harness']['raw']:
        try: tasks = json.loads(raw).get('tasks', [])
        except Exception: hit = True; break
        for t in tasks[1:]:
            if isinstance(t, dict) and set((t.get('args') or {})) & media.get(t.get('task'), set()): hit = True
    if hit: ids.append(r['id'])
print(sys.argv[1], len(ids), 'of', len(d['rows']))
if len(sys.argv) > 2: json.dump(ids, open(sys.argv[2], 'w'))
