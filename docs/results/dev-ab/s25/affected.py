"""Which requests see different planning messages under the working tree's demonstrations than under git
HEAD's (run from the repository root: python docs/results/dev-ab/s25/affected.py OUT.json)."""
import json
import subprocess
import os
import sys

if len(sys.argv) != 2 or os.path.exists(sys.argv[1]):
    sys.exit('usage: affected.py OUT.json (a new file: an existing one, such as a result file, is never overwritten)')

sys.path.insert(0, '.')
import hugginggpt.prompts as P
import hugginggpt.agent.plan.demonstrations as D
from hugginggpt.agent.plan.prompt import planning_messages
from hugginggpt.tools.table import task_table
from hugginggpt.eval.real_requests import load_real_requests, select_split
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.taskbench import load_taskbench
from tests.shared import shared_path

old = subprocess.run(['git', 'show', 'HEAD:hugginggpt/prompts/demonstrations.json'], capture_output=True, text=True).stdout
new = open('hugginggpt/prompts/demonstrations.json', encoding='utf-8').read()

def msgs(pool, *a, **k):
    P._read.cache_clear(); D.default_selector.cache_clear()
    orig = P._read
    P._read = lambda name: pool
    try:
        return [m.content for m in planning_messages(*a, **k)]
    finally:
        P._read = orig
        P._read.cache_clear(); D.default_selector.cache_clear()

all_tasks = task_table()
out = {}
for split in ('dev', 'test'):
    ids = []
    for r in select_split(load_real_requests('benchmarks/data/real_requests.jsonl'), split):
        a = (r.request, all_tasks)
        k = dict(chat_history=r.history or None, files=r.files or None, wants=True)
        if msgs(old, *a, **k) != msgs(new, *a, **k):
            ids.append(r.id)
    out['real-' + split] = ids
ds = load_taskbench(shared_path('taskbench'))
tb_tasks = {t: all_tasks[t] for t in TaskBenchMapping(ds.tools).domain_tasks()}
for lang, path in (('en', None), ('zh', 'benchmarks/data/taskbench-zh.jsonl'), ('es', 'benchmarks/data/taskbench-es.jsonl')):
    rows = [json.loads(l) for l in open(path)] if path else None
    texts = {r['id']: r['user_request'] for r in rows} if rows else {s.id: s.request for s in ds.samples}
    ids = [i for i, t in texts.items() if msgs(old, t, tb_tasks, wants=True) != msgs(new, t, tb_tasks, wants=True)]
    out['tb-' + lang] = ids
json.dump(out, open(sys.argv[1], 'w'))
print({k: len(v) for k, v in out.items()})
