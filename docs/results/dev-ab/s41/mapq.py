"""Probe: an edit of a picture (image-text-to-image) asked whether it is rather a drawing along a condition map of
that picture (its pose, edges, lines, depth, layout), and which drawing.

Stage 1, on every image-text-to-image step of the recorded plans (RUN files): the request, the step's own words,
A) image-text-to-image with its description, B) the drawing family (FAMILY below), both orders (as
``choices.picked`` asks). Stage 2, on every request whose gold plan draws along a map and on the stage-1 steps
that move: the request, the step's words (the gold drawing's request words are not known: the step is "draw the
new picture"), the seven drawings lettered A-G with their task-table descriptions, both orders; the drawing both
orders pick, else none.

    python docs/results/dev-ab/s41/mapq.py RUN.json.gz ... > LOG
Run from the repository root."""
import gzip, json, os, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import task_table

known = dict(task_table())
DRAWINGS = [n for n, s in known.items() if s.map_by]
FAMILY = ("Draw a new picture of a text that follows the structure of the given picture: its pose, edges, "
          "straight lines, depth or layout (a condition map of it, then a drawing along the map).")
LETTERS = "ABCDEFGH"
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}


def ask(request, step, options):
    """options: [(name, description)]; the name both orders pick, else None; and the two picks."""
    picks = []
    for order in (list(options), list(reversed(options))):
        lines = "\n".join(f"{l}) {d}" for l, (_, d) in zip(LETTERS, order))
        system, _, human = render_prompt("planning_choice", request=request, step=step, options=lines).partition("\n---\n")
        scores = scorer([("system", system.strip()), ("human", human.strip())], list(LETTERS[:len(order)]))
        picks.append(order[max(range(len(order)), key=scores.__getitem__)][0])
    return (picks[0] if picks[0] == picks[1] else None), picks


def drawing(request, step):
    return ask(request, step, [(n, f"{n}: {known[n].description}") for n in DRAWINGS])


tally = Counter()
edit = ("image-text-to-image", "image-text-to-image: " + known["image-text-to-image"].description)
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        r = reqs[row['id']]
        gold = [t['task'] for t in r.plan]
        gold_drawing = next((g for g in gold if g in DRAWINGS), None)
        for t in row['harness'].get('plan') or []:
            if t['task'] != 'image-text-to-image':
                continue
            step = t.get('step') or t['task']
            pick, picks = ask(r.request, step, [edit, ("family", "draw along a map: " + FAMILY)])
            moved = pick == "family"
            second = drawing(r.request, step)[0] if moved else None
            outcome = ("won" if gold_drawing and second == gold_drawing else "moved, wrong drawing" if gold_drawing else
                       "lost" if "image-text-to-image" in gold else "moved (neither)") if moved else (
                "kept right" if "image-text-to-image" in gold else "kept wrong")
            tally[("stage 1", outcome)] += 1
            print(json.dumps(dict(id=r.id, stage=1, step=step, picks=picks, second=second, gold=gold, outcome=outcome),
                             ensure_ascii=False), flush=True)
if os.environ.get("STAGE2"):
    for r in reqs.values():
        gold_drawing = next((t['task'] for t in r.plan if t['task'] in DRAWINGS), None)
        if gold_drawing is None or (os.environ["STAGE2"] != "all" and r.id not in os.environ["STAGE2"].split(",")):
            continue
        pick, picks = drawing(r.request, "draw the new picture")
        tally[("stage 2", "right" if pick == gold_drawing else "none" if pick is None else "wrong")] += 1
        print(json.dumps(dict(id=r.id, stage=2, picks=picks, gold=gold_drawing), ensure_ascii=False), flush=True)
for k, v in sorted(tally.items()):
    print(*k, v)
