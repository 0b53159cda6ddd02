"""Session 43: s42/t2tq.py with text-classification's contrast as s43 words it (topic left out). Probe (not built): text-classification steps of every recorded real dev run (any session, any draw; one per request
and step words) asked, as the sibling question asks (both orders, each shown with a contrast), whether they are
done by text-classification or by text2text-generation (a rewrite). Tally: moved where the gold has a rewrite and
no second text-classification (won), moved where the gold has the text-classification (lost).

    python docs/results/dev-ab/s42/t2tq.py
Run from the repository root."""
import glob, gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

CONTRAST = {"text-classification": "Judge a text with a trained model's fixed labels (sentiment, toxicity, spam): "
                                   "the text itself stays as it is.",
            "text2text-generation": "Rewrite a text as asked (paraphrase it, fix its grammar, make it formal or "
                                    "polite, simplify it): the answer is a new text."}
known = {n: s.model_copy(update={"contrast": CONTRAST.get(n, s.contrast)}) for n, s in task_table().items()}
known["text-classification"] = known["text-classification"].model_copy(update={"siblings": ["text2text-generation"]})
reqs = {r.id: r for r in select_split(load_real_requests(pq.REAL_REQUESTS), 'dev')}
seen, cases = set(), []
for path in sorted(glob.glob('docs/results/**/*.json*', recursive=True)):
    try:
        d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    except Exception:
        continue
    if not isinstance(d, dict) or d.get('set') != 'real':
        continue
    for row in d.get('rows', []):
        rid = str(row.get('id'))
        if rid not in reqs:
            continue
        for t in row['harness'].get('plan') or []:
            key = (rid, t.get('step'))
            if t.get('task') == 'text-classification' and t.get('step') and key not in seen:
                seen.add(key)
                cases.append((rid, t['step']))
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
