import os
import json, sys, collections, re
gold={}
for line in open(os.path.join(os.environ.get('HUGGINGGPT_SHARED', '../shared'), 'taskbench', 'data.json')):
    x=json.loads(line); gold[x['id']]=x
d=json.load(open(sys.argv[1]))
cat=collections.Counter(); ex=collections.defaultdict(list)
for r in d['rows']:
    h=r['harness']
    if h['type']=='single': continue
    g=gold[r['id']]
    gl={(l['source'],l['target']) for l in g['task_links']}
    pn=r['result']['task_nodes']; pl={(l['source'],l['target']) for l in r['result']['task_links']}
    names=[n['task'] for n in pn]
    for (s,t) in gl:
        if (s,t) in pl: cat['hit']+=1; continue
        if s not in names and t not in names: k='both missing'
        elif s not in names: k='source missing'
        elif t not in names: k='target missing'
        else:
            args=[a for n in pn if n['task']==t for a in n['arguments']]
            if any('<node-' in str(a) for a in args): k='target reads another node'
            elif any(re.search(r'\.(jpg|png|wav|mp4|mp3|jpeg|txt|csv)$',str(a)) for a in args): k='target reads a file'
            else: k='target reads text'
        cat[k]+=1; ex[k].append((r['id'],s,t,h['request'][:150],[(n['task'],n['arguments']) for n in pn]))
print(sys.argv[1], sum(cat.values()), dict(cat))
if len(sys.argv)>2:
    for e in ex[sys.argv[2]][:int(sys.argv[3]) if len(sys.argv)>3 else 8]: print(e)
