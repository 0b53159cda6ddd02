"""Probe: for each step of the recorded plans that reads a picture only (a detector, a classifier, a caption...),
ask the model alone, as the choice check asks (``choices.picked``: the request, the step's own words, both orders),
whether that step is done by the task written or by visual-question-answering. Prints each case and, per task
written, how often the question moves a step to VQA where the gold holds VQA (won) or the name written (lost)."""
import gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

READERS = ("object-detection", "keypoint-detection", "image-classification", "image-segmentation", "image-to-text")
known = dict(task_table())
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
tally = Counter()
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        rid = row.get('id') or row.get('sample_id')
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
