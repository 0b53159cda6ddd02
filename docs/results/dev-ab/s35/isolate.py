"""Experiment (session 35): each step of recorded plans planned again alone, its own words as the request (with a
stand-in file of the kind it reads when it reads an earlier result), to see whether the name a step gets alone
is a source of candidates for the narrow-choice question. python isolate.py RUN.json OUT.json"""
import asyncio, json, re, sys, tempfile
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.llm import load_llm
from hugginggpt.tools.table import task_table, MEDIA_KINDS

src, dst = sys.argv[1:3]
d = json.load(open(src))
known = task_table()
STAND_IN = {"image": "result.png", "audio": "result.wav", "video": "result.mp4"}
llm = load_llm('gguf:' + pq.gguf_path('qwen2.5-coder-1.5b'), temperature=0.2, n_threads=2, n_ctx=8192)
out = []
try:
    out = json.load(open(dst))
except Exception:
    pass
done = {(o['id'], o['task_id']) for o in out}
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(llm, tools=placeholder_tools(list(known), root=tmp), workspace_root=tmp)
    for row in d['rows']:
        h = row['harness']
        by = {t['id']: t for t in h['plan']}
        for t in h['plan']:
            words = (t.get('step') or '').strip()
            if not words or (row['id'], t['id']) in done:
                continue
            spec = known[t['task']]
            extra = []
            for name, value in t['args'].items():
                arg = spec.find_arg(name)
                if arg is None or arg.value_kind not in MEDIA_KINDS or not isinstance(value, str):
                    continue
                m = re.fullmatch(r'\s*<resource>-(\d+)\s*', value)
                f = STAND_IN[arg.value_kind] if m else value
                if f not in words:
                    extra.append(f)
            request = words + (f" ({', '.join(extra)})" if extra else '')
            planned = asyncio.run(pq.plan_one(agent, request))
            names = [p['task'] for p in planned['plan']]
            out.append({'id': row['id'], 'task_id': t['id'], 'task': t['task'], 'request': request, 'alone': names,
                        'gold': h['gold'], 'seconds': planned['seconds']})
            print(row['id'], t['task'], '->', names, 'gold', h['gold'], planned['seconds'], flush=True)
            json.dump(out, open(dst, 'w'), ensure_ascii=False, indent=1)
