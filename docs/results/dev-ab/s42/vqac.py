"""Probe: session 38's question (``s38/vqaq.py``) with what sets each option apart in place of its description, as the
twin question shows it (``TaskSpec.contrast``). Each step of the recorded plans written as object-detection,
keypoint-detection or image-classification is asked, in both orders, whether it is done by that task or by
visual-question-answering. Prints each case and, per task written, how often the question moves a step to VQA where
the gold holds VQA (won) or the name written (lost).

    python docs/results/dev-ab/s42/vqac.py RUN.json.gz [RUN ...]
Run from the repository root."""
import gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

CONTRAST = {
    "visual-question-answering": "Answer a question about what a picture shows, in a few words: a colour, what "
                                 "someone holds or does, an age, a mood, yes or no.",
    "object-detection": "Find each object in a picture, with a box and a label: where things are and how many.",
    "image-classification": "Name what a whole picture shows, as one of a model's fixed classes (a species, a breed, "
                            "a kind of scene).",
    "keypoint-detection": "Find the key points of people or things in a picture (the joints of a pose, landmarks).",
}
READERS = ("object-detection", "keypoint-detection", "image-classification")
known = {name: spec.model_copy(update={"contrast": CONTRAST.get(name, spec.contrast)}) for name, spec in task_table().items()}
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
tally = Counter()
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        rid = str(row.get('id') or row.get('sample_id'))
        words = reqs[rid].request if d['set'] == 'real' else h['request']
        gold = Counter(h['gold']); have = Counter(t['task'] for t in h.get('plan') or [])
        for t in h.get('plan') or []:
            if t['task'] not in READERS:
                continue
            pick = picked(scorer, words, t.get('step') or t['task'], [t['task'], 'visual-question-answering'], known)
            right = have[t['task']] <= gold[t['task']]
            vqa_missing = have['visual-question-answering'] < gold['visual-question-answering']
            moved = pick != t['task']
            outcome = ('won' if vqa_missing and not right else 'lost' if right else 'neutral') if moved else 'kept'
            tally[(d['set'], t['task'], outcome)] += 1
            print(json.dumps(dict(id=rid, task=t['task'], step=t.get('step'), right=right, vqa_missing=vqa_missing,
                                  moved=moved, outcome=outcome), ensure_ascii=False), flush=True)
for k, v in sorted(tally.items()):
    print(*k, v)
