"""The requests of a whole recorded part whose answers (any raw answer, or the plan kept) name one of the given
tasks: the only requests a new sibling question on those tasks can change (the answers are drawn alike again).

    python docs/results/dev-ab/s45/ids.py PART.json.gz task [task ...]   -> comma-separated ids"""
import gzip, json, sys

d = json.load(gzip.open(sys.argv[1]))
names = set(sys.argv[2:])
ids = []
for r in d['rows']:
    h = r['harness']
    text = ' '.join(h.get('raw') or []) + json.dumps(h.get('plan') or [])
    if any(f'"{n}"' in text for n in names):
        ids.append(str(r['id']))
print(','.join(ids))
