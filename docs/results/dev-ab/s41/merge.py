"""A whole part's result file from a full run and runs of some of its requests: each request's row from the last
file that planned it, scored as ``planning_quality.py`` scores a run (``real_summary``, ``costs``: the median and
mean seconds are those of the rows, not of one run).

    python docs/results/dev-ab/s41/merge.py dev|test OUT.json.gz FULL RUN [RUN ...]
Run from the repository root."""
import gzip, json, statistics, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests, select_split

split, out, *paths = sys.argv[1:]
rows = {}
for path in paths:
    opened = gzip.open(path) if path.endswith('.gz') else open(path, encoding='utf-8')
    rows.update({r['id']: r for r in json.load(opened)['rows']})
requests = select_split(load_real_requests(pq.REAL_REQUESTS), split)
missing = [r.id for r in requests if r.id not in rows]
if missing:
    sys.exit(f"no row for {missing}")
merged = [rows[r.id] for r in requests]
result = {"model": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "set": "real", "split": split, "merged_from": paths,
          **pq.costs(merged, sum(r['harness']['seconds'] for r in merged)), **pq.real_summary(requests, merged),
          "rows": merged}
with gzip.open(out, 'wt', encoding='utf-8') as f:
    json.dump(result, f, ensure_ascii=False)
s = result['scores']
print(split, len(merged), {k: s[k] for k in ('overall', 'tasks:1', 'tasks:2', 'tasks:3+', 'lang:en', 'lang:other') if k in s},
      'calls', result['llm_calls'], 'median s', result['median_seconds'])
