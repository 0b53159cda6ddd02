import json, re, sys
from collections import Counter
base = {r['id']: r for r in json.load(open(sys.argv[1]))['rows']}
new = {}
for line in open(sys.argv[2]):
    m = re.match(r'\[\d+/\d+\] (\S+) [\d.]+s (OK |BAD)', line)
    if m: new[m.group(1)] = m.group(2).strip() == 'OK'
def ok(r): h = r['harness']; return Counter(t['task'] for t in h['plan']) == Counter(h['gold'])
c = Counter()
for i, v in new.items():
    b = ok(base[i]); c[(b, v)] += 1
    if b != v: print(i, 'won' if v else 'lost', base[i]['harness']['gold'])
print('n', len(new), 'base', sum(ok(base[i]) for i in new), 'steps-first', sum(new.values()), dict(c))
