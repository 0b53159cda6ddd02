import json, sys
from collections import Counter
items = json.load(open(sys.argv[1]))
def verdict(it, x):
    if x == it['chosen']: return None
    p, g = Counter(it['plan']), Counter(it['gold'])
    ch = it['chosen']
    if p[ch] <= g[ch]: return 'loss'
    if g[x] > p[x]: return 'win'
    return 'neutral'
def r0(it):
    sc = it['scores']; opts = list(sc)
    a = max(opts, key=lambda o: sc[o][0]); b = max(opts, key=lambda o: sc[o][1])
    return a if a == b else it['chosen']
def r1(t):
    def f(it):
        sc = it['scores']; ch = it['chosen']
        best = max(sc, key=lambda o: sc[o][0] + sc[o][1])
        return best if best != ch and (sc[best][0] + sc[best][1] - sc[ch][0] - sc[ch][1]) / 2 > t else ch
    return f
def r2(t):  # each order separately prefers X over chosen by > t
    def f(it):
        sc = it['scores']; ch = it['chosen']
        best = max(sc, key=lambda o: min(sc[o][0] - sc[ch][0], sc[o][1] - sc[ch][1]) if o != ch else -9)
        return best if min(sc[best][0] - sc[ch][0], sc[best][1] - sc[ch][1]) > t else ch
    return f
rules = [('both agree (now)', r0)] + [(f'mean margin > {t}', r1(t)) for t in (0, 0.25, 0.5, 1.0)] + [(f'each order > {t}', r2(t)) for t in (-0.25, 0, 0.25)]
for name, rule in rules:
    c = Counter(); detail = []
    for it in items:
        v = verdict(it, rule(it))
        if v: c[v] += 1; detail.append((it['id'], it['chosen'], rule(it), v))
    src = Counter((it['file'].split('/')[-1], verdict(it, rule(it))) for it in items)
    print(f"{name:22s} win {c['win']:2d} loss {c['loss']:2d} neutral {c['neutral']:2d} | " + ", ".join(f"{k[0][:8]}:{k[1]}={n}" for k, n in sorted(src.items(), key=str) if k[1]))
    if '-v' in sys.argv: print('   ', [d for d in detail if d[3] != 'neutral'])
print(len(items))
