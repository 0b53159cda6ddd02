"""Probe (not built): text-classification steps of every recorded real dev run (any session, any draw; one per request
and step words) asked, as the sibling question asks (both orders, each shown with a contrast), whether they are
done by text-classification or by text2text-generation (a rewrite). Tally: moved where the gold has a rewrite and
no second text-classification (won), moved where the gold has the text-classification (lost).

    python docs/results/dev-ab/s42/t2tq.py ['text-classification contrast']
Run from the repository root. The optional argument replaces text-classification's contrast (session 43 asked it
with the contrast that leaves topics out, t2tq2-dev.log)."""
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

CONTRAST = {"text-classification": sys.argv[1] if len(sys.argv) > 1 else (
                "Judge a text with one of a model's fixed labels (sentiment, toxicity, topic, spam): the text itself "
                "stays as it is."),
            "text2text-generation": "Rewrite a text as asked (paraphrase it, fix its grammar, make it formal or "
                                    "polite, simplify it): the answer is a new text."}
known = {n: s.model_copy(update={"contrast": CONTRAST.get(n, s.contrast)}) for n, s in task_table().items()}
known["text-classification"] = known["text-classification"].model_copy(update={"siblings": ["text2text-generation"]})
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), 'dev')}
cases = [(rid, step) for rid, _, step in recorded_steps(reqs, {'text-classification'})]
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for rid, step in cases:
    gold = Counter(t['task'] for t in reqs[rid].plan)
    pick = picked(scorer, reqs[rid].request, step, ['text-classification', 'text2text-generation'], known)
    moved = pick != 'text-classification'
    outcome = ('lost' if gold['text-classification'] else 'won' if gold['text2text-generation'] else 'neutral') \
        if moved else ('kept-right' if gold['text-classification'] else 'kept-wrong')
    tally[outcome] += 1
    print(json.dumps(dict(id=rid, step=step, gold=sorted(gold), outcome=outcome), ensure_ascii=False), flush=True)
print(dict(tally))
