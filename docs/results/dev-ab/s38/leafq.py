"""Stage A: for each recorded plan of two or more tasks, ask the model alone, for each last step (a task whose
result no later task reads), whether the user asks for that step's result (yes/no, both orders). Prints, per
variant of the question, how often a step the gold plan does not hold (an extra) is denied, and how often a
step it holds is denied."""
import gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.model import refs_in
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

known = dict(task_table())
SYSTEM = "You read what a user asks for."
HUMAN = {
 "desc": ("A user's request: {request}\n\nA plan for it ends with this step: {task} ({desc}).\n"
          "Does the user ask for what this step gives?\n{options}\n\nAnswer with the letter."),
 "step": ("A user's request: {request}\n\nA plan for it ends with this step: \"{step}\" ({task}).\n"
          "Does the user ask for this?\n{options}\n\nAnswer with the letter."),
}
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
out = []
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        plan = h.get('plan') or []
        if len(plan) < 2:
            continue
        rid = row.get('id') or row.get('sample_id')
        words = reqs[rid].request if d['set'] == 'real' else h['request']
        read = set()
        for t in plan:
            for ref in refs_in(t.get('args') or {}):
                read.add(ref)
        gold = Counter(h['gold']); have = Counter(t['task'] for t in plan)
        for i, t in enumerate(plan):
            if t['id'] in read or t['task'] not in known:
                continue
            extra = have[t['task']] > gold[t['task']]
            rec = dict(id=rid, task=t['task'], extra=extra, request=words[:80])
            for v, tmpl in HUMAN.items():
                votes = []
                for opts in (["yes", "no"], ["no", "yes"]):
                    options = "\n".join(f"{l}) {o}" for l, o in zip("AB", opts))
                    msg = tmpl.format(request=words, task=t['task'], desc=known[t['task']].description,
                                      step=t.get('step') or t['task'], options=options)
                    s = scorer([("system", SYSTEM), ("human", msg)], ["A", "B"])
                    votes.append(round(s[opts.index("yes")] - s[opts.index("no")], 2))
                rec[v] = votes
            out.append(rec); print(json.dumps(rec, ensure_ascii=False), flush=True)
for v in HUMAN:
    denied = [r for r in out if all(x < 0 for x in r[v])]
    print(v, 'leaves', len(out), 'extra', sum(r['extra'] for r in out), 'denied', len(denied),
          'denied extra', sum(r['extra'] for r in denied), 'denied gold', sum(not r['extra'] for r in denied))
