"""Experiment (session 36): each task name of a recorded answer scored as a whole name in the answer's own context.

The grammar-checked sampler draws a task name token by token: at a name's first token the model weighs families
("text" against "sum"), so a family whose mass is spread over many names can win over a single name that is more
likely than any one name of the family. Here the planning prompt and the answer up to a task's name are read once,
and each candidate name (each known task that can run on the arguments the answer wrote for the chosen one, plus
the chosen) is scored as the model's continuation: log P(name + '"' | prompt, answer so far). Written out: the
chosen name, the best-scoring name, their log-probabilities, and the gold. No library code changes.
Run from the repository root: python namescore.py RUN.json.gz CLOSE.json.gz OUT.json [--all]"""
import asyncio, gzip, json, re, sys, tempfile, time
sys.path.insert(0, '.')
import numpy as np
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.plan import planner as P
from hugginggpt.agent.plan.choices import swappable, _TASK_VALUE
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.mapping import TaskBenchMapping
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.eval.taskbench import load_taskbench
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.llm.structured import ConstrainedCache
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import convert_to_openai_messages
from hugginggpt.llm.llamacpp import messages_for_template

run_path, close_path, out_path = sys.argv[1:4]
every = '--all' in sys.argv
op = lambda p: gzip.open(p, 'rt') if p.endswith('.gz') else open(p)
d = json.load(op(run_path))
close = {e['text']: e['close'] for e in json.load(op(close_path))}
tb = d['set'] == 'taskbench'
if tb:
    dataset = load_taskbench(pq.TASKBENCH); mapping = TaskBenchMapping(dataset.tools); tasks = dict(mapping.domain_specs())
else:
    reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
    from hugginggpt.tools.table import task_table
    tasks = dict(task_table())
ConstrainedCache.get = lambda self, *a, **k: None
captured = {}


async def _ask(self, messages, config, stage, model=None):
    captured['messages'] = messages
    raise P.PlanError('captured')
P._Attempt._ask = _ask

model = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2)
llama, lock = model._client()
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
text_of = lambda t: llama._model.token_get_text(t) if t != -1 else ''
fmt = Jinja2ChatFormatter(template=llama.metadata['tokenizer.chat_template'], eos_token=text_of(llama.token_eos()),
                          bos_token=text_of(llama.token_bos()))


def log_probs():
    logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).astype(np.float64)
    return logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))


def score(messages, prefix, names):
    prompt = fmt(messages=messages_for_template(convert_to_openai_messages(messages))).prompt + prefix
    toks = llama.tokenize(prompt.encode('utf-8'), add_bos=True, special=True)
    held = llama.input_ids[:llama.n_tokens]
    keep = next((i for i, (a, b) in enumerate(zip(held, toks)) if a != b), min(len(held), len(toks)))
    llama.n_tokens = min(keep, len(toks) - 1)
    llama.eval(toks[llama.n_tokens:])
    first = log_probs()
    out = {}
    for name in names:
        cand = llama.tokenize((name + '"').encode('utf-8'), add_bos=False, special=False)
        total = float(first[cand[0]])
        for prev, tok in zip(cand, cand[1:]):
            llama.eval([prev]); total += float(log_probs()[tok])
        llama.n_tokens = len(toks)
        out[name] = total
    llama._requires_eval = True
    return out


rows = []
t0 = time.time()
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(FakeListChatModel(responses=['x']), tools=placeholder_tools(mapping.domain_specs() if tb else list(tasks), root=tmp), workspace_root=tmp)
    for row in d['rows']:
        h = row['harness']
        raw = h['raw'][0]
        if raw not in close and not every:
            continue
        if tb:
            asyncio.run(pq.plan_one(agent, h['request']))
        else:
            it = reqs[row['id']]
            asyncio.run(pq.plan_one(agent, it.request, it.history, it.files))
        messages = captured['messages']
        try:
            data = json.loads(raw)
        except Exception:
            continue
        answer = data.get('tasks') if isinstance(data, dict) else data
        spans = list(_TASK_VALUE.finditer(raw))
        if not answer or len(spans) != len(answer):
            continue
        for t, m in zip(answer, spans):
            chosen = m.group(1)
            if chosen not in tasks:
                continue
            args = t.get('args') or {}
            names = [n for n in tasks if n == chosen or swappable(args, tasks[chosen], tasks[n])]
            s = score(messages, raw[:m.start(1)], names)
            best = max(s, key=s.get)
            rows.append({'id': row['id'], 'step': t.get('step'), 'chosen': chosen, 'best': best,
                         'chosen_lp': round(s[chosen], 3), 'best_lp': round(s[best], 3), 'gold': h.get('gold'),
                         'top': sorted(s.items(), key=lambda kv: -kv[1])[:4]})
            if best != chosen:
                print(row['id'], chosen, '->', best, round(s[best] - s[chosen], 3), '| gold', h.get('gold'), flush=True)
json.dump(rows, open(out_path, 'w'), indent=1, ensure_ascii=False)
print('names', len(rows), 'changed', sum(r['best'] != r['chosen'] for r in rows), 'seconds', round(time.time() - t0))
