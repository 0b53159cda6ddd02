"""A result file with rows added: BASE's rows, then NEW's rows of the requests BASE lacks that fall in BASE's
split (the set grew), written to OUT for s21/compose.py to score. Run from the repository root:
python docs/results/dev-ab/s23/extend.py BASE.json NEW.json OUT.json"""
import json, sys
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.eval.real_requests import load_real_requests, select_split

base, new, out = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
split = {r.id for r in select_split(load_real_requests(pq.REAL_REQUESTS), base['split'])}
have = {r['id'] for r in base['rows']}
added = [r for r in new['rows'] if r['id'] in split and r['id'] not in have]
json.dump({**base, 'rows': base['rows'] + added}, open(out, 'w'), indent=1, ensure_ascii=False)
print(len(base['rows']), '+', len(added))
