"""How sure the planner is when it closes its task list: for each recorded first answer of a real-request
result file, the probability the model gives to closing the list (``]``) against writing another task
(``, {"step": "``) after the last task it wrote, with the same prompt the planner sent: the two endings are
scored whole from where their tokens part, since the model merges the closing braces with what follows.
Prints one line per request: id, gold size, planned size, P(another task). Run from a snapshot's root with the model lock held:
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


def _log_probs():
    logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).astype(np.float64)
    return logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))


def _evaluated(tokens):
    """Make the model's state hold ``tokens`` (the prompt cache's state of the block first, then only what
    differs from what it holds), its logits those after the last token."""
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


def continuation_shares(text, endings):
    """The log-probability of each of ``endings`` after ``text``, tokenized as the model writes them (the
    braces that close the last task merge with what follows: ``}}]}`` or ``}},``), from the first token
    where they part from ``text``'s own tokens."""
    whole = [llama.tokenize((text + e).encode('utf-8'), add_bos=True, special=True) for e in endings]
    shared = 0
    for column in zip(*whole):
        if len(set(column)) > 1:
            break
        shared += 1
    shared = min(shared, *(len(w) - 1 for w in whole))
    scores = []
    for tokens in whole:
        _evaluated(tokens[:shared])
        total = 0.0
        for i, token in enumerate(tokens[shared:]):
            total += float(_log_probs()[token])
            if i < len(tokens) - shared - 1:
                llama.eval([token])
        scores.append(total)
    return scores


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
        body = raw.rstrip()
        if not tasks or not body.endswith(']}'):
            continue
        prefix = body.rstrip(' \n}]')
        tail = body[len(prefix):]
        cut = tail.rindex(']')  # the tasks list's own close: the last ] of the tail
        item = items[r['id']]
        request = AgentRequest.parse({"input": item.request, "chat_history": item.history or [], "files": item.files or []})
        messages = messages_for_template(convert_to_openai_messages(agent.planner.messages(request)))
        text = fmt(messages=messages).prompt + prefix
        close, more = continuation_shares(text, [tail, tail[:cut] + ', {"step": "'])
        share = 1 / (1 + math.exp(min(close - more, 700)))
        line = {'id': r['id'], 'gold': len(item.plan), 'planned': len(tasks), 'p_more': round(share, 4),
                'exact_first': sorted(t['task'] for t in tasks) == sorted(t['task'] for t in item.plan)}
        out.append(line)
        print(json.dumps(line), flush=True)
json.dump(out, open(dst, 'w'), indent=1)
