"""planning_quality on the rows of IDS_FILE (a JSON list of ids) only: real requests by id after the split;
TaskBench through --requests/--ids-only files made by the caller."""
import json, os, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
ids = set(json.load(open(os.environ['IDS_FILE'])))
_sel = pq.select_split
pq.select_split = lambda reqs, split: [r for r in _sel(reqs, split) if r.id in ids]
pq.main(sys.argv[1:])
