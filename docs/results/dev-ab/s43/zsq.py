"""Probe: zero-shot classification steps (text or image) of every recorded real run of a part (any session, any
draw; one per request and step words) asked, as the sibling question asks (both orders, each shown with a
contrast), whether they are done by the zero-shot task or by the fixed-label one (text-classification,
image-classification). Tally: moved where the gold has the fixed-label task and fewer zero-shot ones (won), moved
where the gold has the zero-shot one and no fixed one (lost).

    python docs/results/dev-ab/s43/zsq.py dev|test
Run from the repository root."""
import json, sys
from collections import Counter
sys.path.insert(0, '.')
sys.path.insert(0, 'docs/results/dev-ab')
from _common import recorded_steps
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

PART = sys.argv[1] if len(sys.argv) > 1 else 'dev'
CONTRAST = {  # text-classification's: the table's (topic left out; topics are what users list)
    "zero-shot-classification": "Sort a text into labels the user names for this request (any categories, buckets "
                                "or options listed): no model is trained on them.",
    "zero-shot-image-classification": "Pick which of the labels the user names for this request fits a picture "
                                      "(any options listed): no model is trained on them.",
    "text-classification": "Judge a text with a trained model's fixed labels (sentiment, toxicity, spam): the text "
                           "itself stays as it is.",
    "image-classification": "Name what a picture shows with a trained model's fixed classes (which animal, object, "
                            "breed or scene): the user names no options.",
}
PAIRS = {"zero-shot-classification": "text-classification",
         "zero-shot-image-classification": "image-classification"}
known = {n: s.model_copy(update={"contrast": CONTRAST.get(n, s.contrast)}) for n, s in task_table().items()}
for zs, fixed in PAIRS.items():
    known[zs] = known[zs].model_copy(update={"siblings": [fixed]})
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), PART)}
cases = recorded_steps(reqs, PAIRS)
print(len(cases), 'cases', flush=True)
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, zs, step in cases:
    fixed = PAIRS[zs]
    gold = Counter(t['task'] for t in reqs[rid].plan)
    pick = picked(scorer, reqs[rid].request, step, [zs, fixed], known)
    moved = pick != zs
    if moved:
        outcome = 'won' if gold[fixed] else 'lost' if gold[zs] else 'neutral'
    else:
        outcome = 'kept-right' if gold[zs] else 'kept-wrong' if gold[fixed] else 'kept-neutral'
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, task=zs, step=step, gold=sorted(gold), outcome=outcome), ensure_ascii=False),
          flush=True)
print(dict(tally))
