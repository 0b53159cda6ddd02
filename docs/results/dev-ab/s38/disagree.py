"""Which requests two recorded runs plan differently (task names and the names along the edges): their ids, comma-separated."""
import gzip, json, sys
def load(path):
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    return {str(r['id']): r['harness'] for r in d['rows']}
def key(h):
    plan = h.get('plan') or []
    names = {t['id']: t['task'] for t in plan}
    return tuple(sorted(names.values())), tuple(sorted((names.get(d), t['task']) for t in plan for d in t.get('dep') or []))
a, b = load(sys.argv[1]), load(sys.argv[2])
print(",".join(i for i in a if key(a[i]) != key(b[i])))
