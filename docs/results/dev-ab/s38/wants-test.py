"""The wants check on TaskBench's test candidates (s37/cands.py): each candidate planned again by the planner of
f672f12 (--ids) against the AMD test run of the planner before it. Counts only requests whose first answer is
the baseline's to the character (a run of a few ids can draw another first answer); prints, for those, whether
the check asked again, whether the plan changed, and the node F1 before and after."""
import gzip, json, sys
from collections import Counter


def load(path):
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    return {str(r['id']): r['harness'] for r in d['rows']}


def f1(pred, gold):
    p, g = Counter(pred), Counter(gold)
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


for base_path, new_path in zip(sys.argv[1::2], sys.argv[2::2]):
    base, new = load(base_path), load(new_path)
    tally = Counter()
    for rid, h in new.items():
        b = base[rid]
        if (h.get('raw') or [''])[0] != (b.get('raw') or [''])[0]:
            tally['first answer differs'] += 1
            continue
        names = lambda x: sorted(t['task'] for t in x.get('plan') or [])
        asked = len(h.get('raw') or []) > 1 or bool((h.get('usage') or {}).get('wants_checks'))
        changed = names(h) != names(b)
        before, after = f1(names(b), h['gold']), f1(names(h), h['gold'])
        tally['same first answer'] += 1
        tally['drawn again'] += len(h.get('raw') or []) > 1
        tally['plan changed'] += changed
        tally['won'] += after > before
        tally['lost'] += after < before
        if asked:
            print(rid, 'checks', (h.get('usage') or {}).get('wants_checks'), 'draws', len(h.get('raw') or []),
                  'changed' if changed else 'same', f"{before:.2f}->{after:.2f}", names(b), '->', names(h))
    print(new_path, dict(tally))
