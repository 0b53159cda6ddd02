#!/bin/bash
# cmp.sh A B : plans changed between two replay tags, per file, with TB scores
for f in desc-dev-real208 qademo-tb-dev qademo-tb2-dev base-tb-dev-zh twice-tb-dev-es; do python3 - /work/runs/s31/$1-$f.json /work/runs/s31/$2-$f.json <<'PY'
import json,sys,ast
A,B=[json.load(open(p)) for p in sys.argv[1:]]
a,b=[{r['id']:(ast.literal_eval(r['harness']) if isinstance(r['harness'],str) else r['harness']) for r in X['rows']} for X in (A,B)]
d=[i for i in a if json.dumps(a[i]['plan'],sort_keys=True)!=json.dumps(b[i]['plan'],sort_keys=True)]
sa, sb = A['scores'], B['scores']
if 'overall_overall' in sa:
    print(sys.argv[1].split('/')[-1], len(a), 'changed', len(d), 'n-F1 %.4f -> %.4f  e-F1 %.4f -> %.4f' % (sa['overall_overall']['node_f1'], sb['overall_overall']['node_f1'], sa['overall_overall']['edge_f1'], sb['overall_overall']['edge_f1']))
else:
    print(sys.argv[1].split('/')[-1], len(a), 'changed', len(d), 'exact %s -> %s' % (sa.get('overall',{}).get('exact'), sb.get('overall',{}).get('exact')), 'n/e', sa.get('overall',{}).get('n_f1'), sa.get('overall',{}).get('e_f1'), '->', sb.get('overall',{}).get('n_f1'), sb.get('overall',{}).get('e_f1'))
for i in d: print('  ', i, [t['task'] for t in a[i]['plan']], '->', [t['task'] for t in b[i]['plan']], 'gold', b[i]['gold'])
PY
done
