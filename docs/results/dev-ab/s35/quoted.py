"""Each step of the follow-ups of a recorded real-request run: the share of its letters inside one run of an earlier ask
(session 35). python quoted.py RUN.json REQUESTS.jsonl"""
import json,re,sys
from difflib import SequenceMatcher
NW=re.compile(r"\W+")
def bare(s): return NW.sub("", s or "").casefold()
def lcs(a,b):
    m=SequenceMatcher(None,a,b,autojunk=False).find_longest_match(0,len(a),0,len(b)); return m.size, m.a
rows={}
for f in sys.argv[2:]:
    for l in open(f):
        x=json.loads(l); rows[x['id']]=x
d=json.load(open(sys.argv[1]))
for r in d['rows']:
    src=rows.get(r['id'])
    if not src or not src.get('history'): continue
    asks=[h['content'] for h in src['history'] if h['role']=='user']
    h=r['harness']; g=sorted(h['gold']); p=sorted(t['task'] for t in h['plan'])
    for t in h['plan']:
        s=bare(t.get('step'))
        if not s: continue
        best=max((lcs(s,bare(a))[0],a) for a in asks)
        now=lcs(s,bare(src['request']))[0]
        cov=best[0]/len(s)
        flag = cov>=0.85
        print(('FLAG ' if flag else '     ')+r['id'], 'ok' if g==p else 'MISS', t['task'], f"{cov:.2f} now={now/len(s):.2f}", repr(t.get('step'))[:60], '| ask:', best[1][:50])
