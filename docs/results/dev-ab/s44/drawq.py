"""Probe: every step written as an edit (image-text-to-image) in the recorded real runs of a part (once per request and
step words), asked alone which of eight tasks does it: the edit, or one of the seven drawings along a condition map
of the picture (each shown with what it keeps), lettered A-H in the table's order and in the reverse order; a
drawing counts only when both orders pick it. Tally against the gold: a drawing picked where the gold has that
drawing (won) or none (lost); the edit kept where the gold has an edit (kept-right) or a drawing (kept-wrong).

    python docs/results/dev-ab/s44/drawq.py dev [two|rot]
(``two``: first the edit against "a new picture keeping only the pose, outlines, lines, depth, surface or layout of a
picture", both orders; when both pick that, which of the seven drawings, both orders; ``rot``: the second question
asked in each of the seven rotations of the list, the drawing with the highest summed log-probability.)
Run from the repository root (one llama.cpp process at a time)."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_steps
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART = sys.argv[1]
known = task_table()
EDIT = 'image-text-to-image'
KEEPS = {'openpose-text-to-image': 'the pose of the people in it', 'canny-text-to-image': 'its outlines (Canny edges)',
         'hed-text-to-image': 'its soft edges (HED)', 'mlsd-text-to-image': 'its straight lines (M-LSD)',
         'depth-text-to-image': 'its depth layout', 'normal-text-to-image': 'its surface shape (normal map)',
         'seg-text-to-image': 'the layout of its regions (segmentation)'}
OPTIONS = {EDIT: known[EDIT].contrast,
           **{name: f"Draw a new picture of what a text says that keeps only {keeps} of a picture: everything else is new."
              for name, keeps in KEEPS.items()}}
LET = 'ABCDEFGH'
TWO = len(sys.argv) > 2 and sys.argv[2] in ('two', 'rot')
ROT = len(sys.argv) > 2 and sys.argv[2] == 'rot'
DRAW = "Draw a new picture of what a text says that keeps only the pose, outlines, lines, depth, surface or layout of a picture: everything else is new."
SYSTEM = "You choose the task that does one step of a user's request."
HUMAN = "A user's request: {r}\n\nOne step of it: {s}\n\nWhich of these tasks does that step?\n{o}\n\nAnswer with the letter."
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
cases = [(rid, step) for rid, _, step in recorded_steps(reqs, {EDIT})]
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, step in cases:
    def ask(options):
        picks = []
        for order in (list(options), list(reversed(options))):
            lines = "\n".join(f"{LET[i]}) {options[name]}" for i, name in enumerate(order))
            s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=reqs[rid].request, s=step, o=lines))],
                       list(LET[:len(order)]))
            picks.append(order[max(range(len(order)), key=s.__getitem__)])
        return picks

    def rotated(options):
        """The option with the highest log-probability summed over every rotation of the list (each option once
        in each position), twice (so that the two picks compare as the others')."""
        names, total = list(options), Counter()
        for shift in range(len(names)):
            order = names[shift:] + names[:shift]
            lines = "\n".join(f"{LET[i]}) {options[name]}" for i, name in enumerate(order))
            s = scorer([("system", SYSTEM), ("human", HUMAN.format(r=reqs[rid].request, s=step, o=lines))],
                       list(LET[:len(order)]))
            for i, name in enumerate(order):
                total[name] += s[i]
        best = max(names, key=total.__getitem__)
        return [best, best]

    if TWO:  # first the edit against a drawing along a map, then which map
        picks = ask({EDIT: OPTIONS[EDIT], 'draw': DRAW})
        if picks == ['draw', 'draw']:
            picks = (rotated if ROT else ask)({name: OPTIONS[name] for name in KEEPS})
    else:
        picks = ask(OPTIONS)
    pick = picks[0] if picks[0] == picks[1] and picks[0] != 'draw' else EDIT
    gold = Counter(t['task'] for t in reqs[rid].plan)
    if pick != EDIT:
        outcome = 'won' if gold[pick] else 'lost'
    else:
        outcome = 'kept-right' if gold[EDIT] else 'kept-wrong' if any(gold[n] for n in KEEPS) else 'kept-neutral'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, step=step, picks=picks, gold=sorted(gold), outcome=outcome), ensure_ascii=False),
          flush=True)
print(dict(tally))
