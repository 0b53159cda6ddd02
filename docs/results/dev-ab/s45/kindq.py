"""Probe: each step of a recorded real plan written as a generation from words alone (text-to-image, text-to-video,
text-to-audio, text-to-speech) when an earlier step of the same plan is written as the same task (a second drawing,
a second clip), asked alone what it gives the user: a picture, a video, music or a sound, a voice speaking a text,
or a text, in every rotation of the list (the kind with the highest summed log-probability). Tally against the
gold: the kind's own task picked where the gold has more of it than the plan and fewer of the written task (won),
where the gold has as many of the written task as the plan (lost), else (neutral); kept (kept-right when the gold
has as many of the written task as the plan, else kept-wrong).

    python docs/results/dev-ab/s45/kindq.py dev [all]
(``all``: every such step, not only a second one.) Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_rows
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import LETTERS
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel

PART = sys.argv[1]
ALL = len(sys.argv) > 2 and sys.argv[2] == 'all'
KINDS = {'text-to-image': 'a picture', 'text-to-video': 'a video', 'text-to-audio': 'music or a sound (no speech)',
         'text-to-speech': 'a voice speaking a text aloud', 'text-generation': 'a text'}
SYSTEM = "You read what one step of a user's request gives the user."
HUMAN = "A user's request: {r}\n\nOne step of it: {s}\n\nWhat does that step give the user?\n{o}\n\nAnswer with the letter."
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
seen, cases = set(), []
for rid, row in recorded_rows('real', set(reqs)):
    plan = row['harness'].get('plan') or []
    for i, t in enumerate(plan):
        if t.get('task') in list(KINDS)[:4] and t.get('step') and (ALL or any(u['task'] == t['task'] for u in plan[:i])):
            key = (rid, t['task'], t['step'])
            if key not in seen:
                seen.add(key)
                cases.append((rid, t['task'], t['step'], Counter(u['task'] for u in plan)))
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
names = list(KINDS)
for rid, task, step, planned in cases:
    total = dict.fromkeys(names, 0.0)
    for shift in range(len(names)):
        order = names[shift:] + names[:shift]
        lines = "\n".join(f"{LETTERS[i]}) {KINDS[n]}" for i, n in enumerate(order))
        s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=reqs[rid].request, s=step, o=lines))],
                   list(LETTERS[:len(order)]))
        for n, v in zip(order, s):
            total[n] += v
    pick = max(names, key=total.__getitem__)
    gold = Counter(t['task'] for t in reqs[rid].plan)
    if pick != task:
        outcome = 'lost' if gold[task] >= planned[task] else 'won' if gold[pick] > planned[pick] else 'neutral'
    else:
        outcome = 'kept-right' if gold[task] >= planned[task] else 'kept-wrong'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, task=task, step=step, pick=pick, gold=sorted(gold), outcome=outcome,
                          margin=round(total[pick] - sorted(total.values())[-2], 2)), ensure_ascii=False), flush=True)
print(dict(tally))
