"""Run planning_quality with the close calls of each LLM answer recorded beside it (experiment)."""
import json, sys
sys.path.insert(0, '.')
import hugginggpt.agent.plan.planner as P
from benchmarks import planning_quality as Q
seen = []
orig = P.acall_llm
async def rec(stage, call, prompt, **kw):
    reply = await orig(stage, call, prompt, **kw)
    seen.append({"stage": stage, "text": reply.text, "close": (reply.message.response_metadata or {}).get("close_calls", []) if reply.message is not None else []})
    return reply
P.acall_llm = rec
out = sys.argv[sys.argv.index('--out') + 1]
try:
    Q.main(sys.argv[1:])
finally:
    json.dump(seen, open(out + '.close.json', 'w'), ensure_ascii=False)
