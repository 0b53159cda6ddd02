"""The vote on unsure requests (HUGGINGGPT_PLAN_DRAWS=3, HUGGINGGPT_PLAN_VOTE=unsure) on the test parts, paired with
the Xeon test runs (planning-test-...-live/current-*.json.gz, one draw). Only the requests whose baseline asked a
narrow task-name choice were planned again (s39/vote-*.json.gz, Intel Xeon); a re-planned request replaces its baseline row when
its first answer is the baseline's to the character (else the baseline row stays: another draw, not the vote), so
every other request counts as unchanged. Per request over the whole test part: exact task list and node F1 (real
requests: the gold's task names), node and edge F1 against TaskBench's gold graph; bootstrap 95% interval; extra
planning calls per request. Only the plans the vote changed count (a repair "N of M usable draws agree"); plans that
the rest of the planner changes since the baseline's commit (the wants check, re-asks) are listed as "other". Run from the repository root: python docs/results/dev-ab/s39/votetest.py"""
import collections, gzip, json, random, sys

sys.path.insert(0, '.')
from hugginggpt.eval.taskbench import load_taskbench

L = 'docs/results/planning-test-qwen2.5-coder-1.5b-live/'
S = 'docs/results/dev-ab/s39/'
SETS = [('real test', 'current-real-test209', 'vote-real-test'), ('TaskBench test en', 'current-taskbench-test-en', 'vote-tb-test-en'),
        ('TaskBench test zh', 'current-taskbench-test-zh', 'vote-tb-test-zh'), ('TaskBench test es', 'current-taskbench-test-es', 'vote-tb-test-es')]


def rows(path):
    for p in (path + '.json.gz', path + '.json'):
        try:
            return {str(r['id']): r for r in json.load(gzip.open(p) if p.endswith('.gz') else open(p))['rows']}
        except FileNotFoundError:
            continue
    raise FileNotFoundError(path)


def f1(pred, gold):
    p, g = collections.Counter(pred), collections.Counter(gold)
    if not p and not g:
        return 1.0
    hit = sum((p & g).values())
    return 0.0 if not hit else 2 * hit / (sum(p.values()) + sum(g.values()))


def interval(xs):
    random.seed(0)
    b = sorted(sum(random.choice(xs) for _ in xs) / len(xs) for _ in range(2000))
    return f"{sum(xs) / len(xs):+.3f} [{b[50]:+.3f}, {b[1949]:+.3f}]"


def graph(row, samples):
    """(task names, links) of a row's plan, and of its gold."""
    if 'result' in row:  # TaskBench: the converted result against the sample's gold graph
        res, g = row.get('result') or {}, samples[row['id']]
        return (([n['task'] for n in res.get('task_nodes') or []], [(l['source'], l['target']) for l in res.get('task_links') or []]),
                ([n['task'] for n in g.nodes], [(l['source'], l['target']) for l in g.links]))
    h = row['harness']
    return ([t['task'] for t in h.get('plan') or []], []), ([x.lower().replace(' ', '-') for x in h['gold']], [])


samples = {s.id: s for s in load_taskbench('../shared/taskbench').samples}
for name, base_file, vote_file in SETS:
    base, vote = rows(L + base_file), rows(S + vote_file)
    exact, node, edge, extra, changed, other_draw, voted = [], [], [], 0, [], [], 0
    for i, b in base.items():
        v = vote.get(i)
        if v is not None and v['harness']['raw'][:1] != b['harness']['raw'][:1]:
            other_draw.append(i)
            v = None
        by_vote = v is not None and any('usable draws agree' in r['reason'] for r in v['harness'].get('repairs') or [])
        after = v if by_vote else b  # a plan changed by the rest of the current planner is listed, not counted
        (bp, bl), (gp, gl) = graph(b, samples)
        (ap, al), _ = graph(after, samples)
        exact.append((sorted(ap) == sorted(gp)) - (sorted(bp) == sorted(gp)))
        node.append(f1(ap, gp) - f1(bp, gp))
        edge.append(f1(al, gl) - f1(bl, gl))
        if v is not None:
            u, ub = v['harness'].get('usage') or {}, b['harness'].get('usage') or {}
            extra += u.get('llm_calls', 1) - ub.get('llm_calls', 1)
            voted += 'plan_votes' in u
            (vp, vl), _ = graph(v, samples)
            if sorted(vp) != sorted(bp) or sorted(vl) != sorted(bl):
                why = [r['reason'] for r in v['harness'].get('repairs') or [] if r.get('pass') == 'planner']
                changed.append(f"{'vote' if by_vote else 'other'} {i} {sorted(bp)} -> {sorted(vp)} (gold {sorted(gp)}) {why}")
    n = len(base)
    print(f"{name}: n={n}, re-planned {len(vote)} ({len(other_draw)} another first answer: {other_draw}), voted {voted}, "
          f"extra calls a request {extra / n:.3f}")
    print(f"  exact {interval(exact)} {exact.count(1)} won / {exact.count(-1)} lost; node F1 {interval(node)} "
          f"{sum(x > 0 for x in node)} / {sum(x < 0 for x in node)}; edge F1 {interval(edge)} {sum(x > 0 for x in edge)} / {sum(x < 0 for x in edge)}")
    for c in changed:
        print('  ', c)
