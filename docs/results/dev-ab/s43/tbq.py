"""Probe (TaskBench, one sibling pair): each step written as task A in the given recorded TaskBench runs asked, as the
sibling question asks (both orders, each shown with its contrast), whether it is done by A or by B. Outcome per step:
moved where the plan has more A than the gold and fewer B (won), moved where the plan's A are not more than the
gold's (lost), else neutral; kept.

    python docs/results/dev-ab/s43/tbq.py A B 'A contrast' 'B contrast' RUN.json.gz [RUN ...]
Run from the repository root (one llama.cpp process at a time)."""
import gzip, json, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

A, B, CA, CB = sys.argv[1:5]
known = dict(task_table())
known[A] = known[A].model_copy(update={"contrast": CA})
known[B] = known[B].model_copy(update={"contrast": CB})
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
tally = Counter()
for path in sys.argv[5:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h = row['harness']
        gold = Counter(h['gold']); have = Counter(t['task'] for t in h.get('plan') or [])
        for t in h.get('plan') or []:
            if t['task'] != A:
                continue
            moved = picked(scorer, h['request'], t.get('step') or A, [A, B], known) != A
            outcome = ('won' if have[A] > gold[A] and have[B] < gold[B] else 'lost' if have[A] <= gold[A]
                       else 'neutral') if moved else 'kept'
            tally[outcome] += 1
            print(json.dumps(dict(id=row.get('id'), step=t.get('step'), gold=sorted(gold), outcome=outcome),
                             ensure_ascii=False), flush=True)
print(dict(tally))
