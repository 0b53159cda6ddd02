import json, re, sys
from collections import Counter
from hugginggpt.tools.table import task_table
names = sorted(task_table())
res = json.load(open(sys.argv[1]))
close = json.load(open(sys.argv[1] + '.close.json'))
by_text = {c['text']: c for c in close}
TASK = re.compile(r'"task": "([^"]*)"')
GAP = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
def alts(text, calls):
    """per task name in text: (name, [(gap, alternative names)])"""
    out = []
    for m in TASK.finditer(text):
        s, e = m.start(1), m.end(1)
        found = []
        for c in calls:
            if s <= c['at'] <= e and c['gap'] <= GAP:
                prefix = text[s:c['at']] + c['other']
                if '"' in prefix:
                    cands = [prefix.split('"')[0]] if prefix.split('"')[0] in names else []
                else:
                    cands = [n for n in names if n.startswith(prefix)]
                found.append((c['gap'], cands))
        out.append((m.group(1), found))
    return out
stats = Counter()
for r in res['rows']:
    h = r['harness']; got = [t['task'] for t in h['plan']]; ok = sorted(got) == sorted(h['gold'])
    raw = h['raw'][0] if h['raw'] else ''
    c = by_text.get(raw)
    if c is None: stats['nomatch'] += 1; continue
    for name, found in alts(raw, c['close']):
        if not found: stats[('ok' if ok else 'miss', 'sure', name in h['gold'])] += 1; continue
        g = min(f[0] for f in found)
        right_alt = any(set(f[1]) & (set(h['gold']) - set(got)) for f in found)
        stats[('ok' if ok else 'miss', 'close', name in h['gold'], right_alt)] += 1
        print(r['id'], 'OK ' if ok else 'BAD', name, 'in gold' if name in h['gold'] else 'NOT gold', h['gold'], [(round(f[0],2), f[1][:4]) for f in found], 'GOLD-ALT' if right_alt else '')
for k, v in sorted(stats.items(), key=str): print(k, v)
