import json,sys,re,collections
def tasks_of_raw(s):
    try: j=json.loads(s)
    except Exception: return None
    if isinstance(j,dict): j=j.get('tasks',[])
    try: return sorted(t['task'] for t in j)
    except Exception: return None
def cat(reason):
    r=reason.replace('re-asked after: ','')
    for k,p in [('wants-text','wants.*no task of the plan makes text'),('wants-media','wants .* back, but no task'),('unread-file','which no task reads'),('self-ref','refers to its own output'),('missing-input','gives no|does not give|no such file|exists nowhere'),('kind','which makes no'),('maps','map')]:
        if re.search(p,r): return k
    return r[:60]
for f in sys.argv[1:]:
    d=json.load(open(f))
    stats=collections.defaultdict(lambda:[0,0,0,0,0])
    for r in d['rows']:
        h=r['harness']
        if len(h['raw'])<2: continue
        gold=sorted(h['gold']); first=tasks_of_raw(h['raw'][0]); final=sorted(t['task'] for t in h['plan'])
        reasons=[x['reason'] for x in h['repairs'] if x.get('pass')=='planner']
        c=cat(reasons[0]) if reasons else 'none'
        s=stats[c]; s[0]+=1; s[1]+= first==gold; s[2]+= final==gold; s[3]+= final==[]; s[4]+= (first!=gold and final==gold) - (first==gold and final!=gold)
    print(f)
    for k,v in sorted(stats.items(), key=lambda x:-x[1][0]): print(f'  {k:20s} n={v[0]:3d} first_exact={v[1]:3d} final_exact={v[2]:3d} empty={v[3]:3d} net={v[4]:+d}')
