"""Session 40: a step making a voice, sound or picture for a made result, given back reading the text that result was
made from (``PlanContext.made_from``), paired with the planner before it on the same requests.

    python docs/results/dev-ab/s40/made.py BASE NEW [FULL]

BASE and NEW: planning_quality.py result files (real requests) of the planner before and after, on the same ids;
FULL (optional): a run of the whole part whose rows stand for requests neither file planned (unchanged by the
change: it acts only where a step was taken out for reading a made result as its text, which those runs show).
Per request: exact task list, node F1 and edge F1 against the gold plan; the paired difference with a bootstrap
95% interval; won / lost; by plan size and language. Run from the repository root."""
import collections, gzip, json, random, sys

sys.path.insert(0, '.')
from hugginggpt.eval.real_requests import load_real_requests  # noqa: E402
from hugginggpt.tools.resources.refs import ref_ids  # noqa: E402


def rows(path):
    opened = gzip.open(path) if path.endswith('.gz') else open(path, encoding='utf-8')
    return {str(r['id']): r for r in json.load(opened)['rows']}


def f1(pred, gold):
    p, g = collections.Counter(pred), collections.Counter(gold)
    if not p and not g:
        return 1.0
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def edges(plan):
    names = {s.get('id'): s['task'] for s in plan}
    return [(names[n], s['task']) for s in plan for n in set(ref_ids(json.dumps(s.get('args') or {}, ensure_ascii=False)))
            if n in names and n != s.get('id')]


def scores(row, gold):
    plan = row['harness'].get('plan') or []
    tasks = [t['task'] for t in plan]
    return (collections.Counter(tasks) == collections.Counter(t['task'] for t in gold), f1(tasks, [t['task'] for t in gold]),
            f1(edges(plan), edges(gold)))


def interval(xs):
    random.seed(0)
    b = sorted(sum(random.choice(xs) for _ in xs) / len(xs) for _ in range(2000))
    return f"{sum(xs) / len(xs):+.3f} [{b[50]:+.3f}, {b[1949]:+.3f}]"


def main(base_file, new_file, full_file=None):
    gold = {r.id: r for r in load_real_requests('benchmarks/data/real_requests.jsonl')}
    base, new = rows(base_file), rows(new_file)
    full = rows(full_file) if full_file else {}
    ids = sorted(set(base) & set(new) | (set(full) - set(base) - set(new)))
    per = {}
    for i in ids:
        b, n = (base[i], new[i]) if i in base and i in new else (full[i], full[i])
        per[i] = (scores(b, gold[i].plan), scores(n, gold[i].plan))
    print(f"{len(ids)} requests ({len(set(base) & set(new))} planned by both)")
    for label, k in (('exact', 0), ('node F1', 1), ('edge F1', 2)):
        d = [float(n[k]) - float(b[k]) for b, n in per.values()]
        won = sum(x > 0 for x in d)
        lost = sum(x < 0 for x in d)
        mb = sum(float(b[k]) for b, _ in per.values()) / len(per)
        mn = sum(float(n[k]) for _, n in per.values()) / len(per)
        print(f"  {label}: {mb:.3f} -> {mn:.3f}, {interval(d)}, {won} won / {lost} lost")
    groups = collections.defaultdict(list)
    for i, (b, n) in per.items():
        size = len(gold[i].plan)
        groups['size ' + ('0' if size == 0 else '1' if size == 1 else '2' if size == 2 else '3+')].append((b[0], n[0]))
        groups['lang ' + ('en' if gold[i].lang == 'en' else 'other')].append((b[0], n[0]))
    for g in sorted(groups):
        xs = groups[g]
        print(f"  {g}: n={len(xs)} exact {sum(b for b, _ in xs) / len(xs):.3f} -> {sum(n for _, n in xs) / len(xs):.3f}")
    for i, (b, n) in per.items():
        if b != n:
            print(f"  {i}: {[t['task'] for t in base[i]['harness']['plan']]} -> {[t['task'] for t in new[i]['harness']['plan']]}"
                  f" gold {[t['task'] for t in gold[i].plan]}")


if __name__ == '__main__':
    main(*sys.argv[1:])
