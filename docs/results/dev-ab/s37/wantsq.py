"""Stage A: for each recorded plan whose answer's `wants` names a media kind that no task makes and the request's
files do not have, ask the model alone whether the user asks to get that kind back (yes/no, both orders)."""
import gzip, json, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.context import input_kinds
from hugginggpt.agent.plan.outputs import makes
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

known = dict(task_table())
WHAT = {"audio": "a sound or spoken audio", "image": "a picture", "video": "a video"}
SYSTEM = "You read what a user asks for."
HUMAN = ("A user's request: {request}\n\nDoes the user ask to get {what} back, made for them (not a file they give)?\n"
         "{options}\n\nAnswer with the letter.")
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
out = []
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        try:
            a = json.loads(h['raw'][-1])
        except Exception:
            continue
        rid = row.get('id') or row.get('sample_id')
        if d['set'] == 'real':
            it = reqs[rid]; words = it.request
            ctx = " ".join([*(t['content'] for t in (it.history or [])), it.request, *(it.files or [])])
        else:
            words = h['request']; ctx = words
        given = input_kinds(ctx)
        tasks = [t['task'] for t in h['plan'] if t['task'] in known]
        for kind in [k for k in (a.get('wants') or []) if k in WHAT]:
            if kind in given or any(makes(known[t], kind) for t in tasks):
                continue
            gold = any(makes(known[t], kind) for t in h['gold'] if t in known)
            votes = []
            for opts in (["yes", "no"], ["no", "yes"]):
                options = "\n".join(f"{l}) {o}" for l, o in zip("AB", opts))
                s = scorer([("system", SYSTEM), ("human", HUMAN.format(request=words, what=WHAT[kind], options=options))], ["A", "B"])
                votes.append((opts[0] if s[0] > s[1] else opts[1], round(s[opts.index("yes")] - s[opts.index("no")], 2)))
            rec = dict(id=rid, kind=kind, gold=gold, votes=votes, request=words[:90])
            out.append(rec); print(json.dumps(rec, ensure_ascii=False), flush=True)
conf = [r for r in out if all(v[0] == 'yes' for v in r['votes'])]
print('cases', len(out), 'gold', sum(r['gold'] for r in out), 'confirmed', len(conf), 'confirmed gold', sum(r['gold'] for r in conf))
