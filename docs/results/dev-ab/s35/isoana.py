"""Reads isolate.py's output against the replayed plans: each step whose name alone differs, won / lost / sideways
against the gold (session 35; the paths are this machine's)."""
import json
from collections import Counter
o=json.load(open('/tmp/s35-isolate.json'))
rows={r['id']:r for r in json.load(open('/tmp/cc100-base-replay.json'))['rows']}
c=Counter()
for x in o:
    P=x['task']; A=x['alone'][0] if x['alone'] else ''
    if x['alone'] and P in x['alone']: A=P
    G=Counter(x['gold']); plan=Counter(t['task'] for t in rows[x['id']]['harness']['plan'])
    if A==P: c['same']+=1; continue
    pin = plan[P] <= G[P]   # P is (one of) the gold's
    ain = G[A] > plan[A]
    k = 'win' if (not pin and ain) else 'loss' if (pin and not ain) else 'side'
    c[k]+=1
    print(k, x['id'], P, '->', A, '|', x['request'][:70], '| gold', x['gold'])
print(c)
