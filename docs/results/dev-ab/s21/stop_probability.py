"""How sure the planner is when it closes its task list: for each recorded first answer of a real-request
result file, the probability the model gives to closing the list (``]``) against writing another task
(``,``) right after the last task it wrote, with the same prompt the planner sent (no grammar: the two are
the only tokens the grammar allows there). Prints one line per request: id, gold size, planned size,
P(another task). Run from a snapshot's root with the model lock held:
python docs/results/dev-ab/s21/stop_probability.py RESULT.json OUT.json"""
import json, math, os, sys, tempfile
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent import GlobalPlanAgent
from hugginggpt.agent.request import AgentRequest
from hugginggpt.eval.compare import placeholder_tools
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel, messages_for_template
from hugginggpt.tools.table import task_table
from langchain_core.messages import convert_to_openai_messages
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

src, dst = sys.argv[1], sys.argv[2]
rows = json.load(open(src))['rows']
items = {r.id: r for r in load_real_requests('benchmarks/data/real_requests.jsonl')}
llm = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=8192, temperature=0.2)
llama, lock = llm._client()
text = lambda t: llama._model.token_get_text(t) if t != -1 else ""
fmt = Jinja2ChatFormatter(template=llama.metadata['tokenizer.chat_template'], eos_token=text(llama.token_eos()),
                          bos_token=text(llama.token_bos()))

import numpy as np
COMMA, CLOSE = [], []
for t in range(llama.n_vocab()):
    piece = llama.detokenize([t]).decode('utf-8', 'ignore').lstrip()
    (COMMA if piece.startswith(',') else CLOSE if piece.startswith(']') else []).append(t)


def next_token_shares(prompt):
    """P(a token opening with ',') and P(one opening with ']') next, reading only what the model has not
    read yet (the prompt cache's state of the block, then the request and the answer)."""
    tokens = llama.tokenize(prompt.encode('utf-8'), add_bos=True, special=True)
    state = llama.cache[tokens] if llama.cache is not None and tokens in llama.cache else None
    if state is not None:
        llama.load_state(state)
    n = 0
    for a, b in zip(llama._input_ids[:llama.n_tokens], tokens):
        if a != b:
            break
        n += 1
    n = min(n, len(tokens) - 1)
    llama._ctx.kv_cache_seq_rm(-1, n, -1)
    llama.n_tokens = n
    llama.eval(tokens[n:])
    logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).astype(np.float64)
    p = np.exp(logits - logits.max()); p /= p.sum()
    return float(p[COMMA].sum()), float(p[CLOSE].sum())

out = []
with tempfile.TemporaryDirectory() as tmp:
    agent = GlobalPlanAgent(llm, tools=placeholder_tools(dict(task_table()), root=tmp), workspace_root=tmp)
    for r in rows:
        h = r['harness']
        if not h.get('raw'):
            continue
        raw = h['raw'][0]
        try:
            answer = json.loads(raw)
        except ValueError:
            continue
        tasks = answer.get('tasks') or []
        close = raw.rstrip().rstrip('}').rstrip()
        if not tasks or not close.endswith(']'):
            continue
        prefix = close[:-1]  # up to the end of the last task
        item = items[r['id']]
        request = AgentRequest.parse({"input": item.request, "chat_history": item.history or [], "files": item.files or []})
        messages = messages_for_template(convert_to_openai_messages(agent.planner.messages(request)))
        prompt = fmt(messages=messages).prompt + prefix
        p_more, p_close = next_token_shares(prompt)
        share = p_more / (p_more + p_close) if p_more + p_close else float('nan')
        line = {'id': r['id'], 'gold': len(item.plan), 'planned': len(tasks), 'p_more': round(share, 4),
                'exact_first': sorted(t['task'] for t in tasks) == sorted(t['task'] for t in item.plan)}
        out.append(line)
        print(json.dumps(line), flush=True)
json.dump(out, open(dst, 'w'), indent=1)
