"""Probe: the twin question (text-to-speech or text-to-audio, ``choices.picked``: the request, the step's own words,
the two descriptions, both orders) asked with other task descriptions (DESC below, env VARIANT), on every
text-to-speech and text-to-audio step of the recorded plans. Tally per task written: moved to the other where the
gold holds the other (won), moved where the written one is right (lost), kept.

    VARIANT=v1 python docs/results/dev-ab/s41/dubq.py RUN.json.gz ...
Run from the repository root."""
import gzip, json, os, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import picked
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

DESC = {
    "v0": {},
    "v1": {"text-to-speech": "Read a text aloud, producing speech audio (a voice: narration, voice-over, dubbing).",
           "text-to-audio": "Generate music or sound effects from a description of them (no voice: a text read "
                            "aloud is text-to-speech)."},
    "v2": {"text-to-speech": "Speak a text with a voice, producing speech audio (reading aloud, narration, dubbing).",
           "text-to-audio": "Generate music or sound effects, no speech, from a description of them."},
    "v3": {"text-to-speech": "Read a text aloud with a voice, producing speech audio (narration, voice-over, dubbing)."},
    "v4": {"text-to-speech": "Speak the words of a text aloud with a voice (reading, narration, voice-over, dubbing).",
           "text-to-audio": "Generate music or sound effects that a text describes (no words are spoken)."},
    "v5": {"text-to-speech": "Speak the words of a text aloud with a voice.",
           "text-to-audio": "Generate music or sound effects that a text describes (no words are spoken)."},
}
variant = os.environ.get("VARIANT", "v1")
known = {n: (s.model_copy(update={"description": DESC[variant][n]}) if n in DESC[variant] else s)
         for n, s in task_table().items()}
PAIR = ("text-to-speech", "text-to-audio")
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
tally = Counter()
for path in sys.argv[1:]:
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    for row in d['rows']:
        h, rid = row['harness'], row['id']
        gold = Counter(t['task'] for t in reqs[rid].plan)
        have = Counter(t['task'] for t in h.get('plan') or [])
        for t in h.get('plan') or []:
            if t['task'] not in PAIR:
                continue
            other = PAIR[1 - PAIR.index(t['task'])]
            pick = picked(scorer, reqs[rid].request, t.get('step') or t['task'], [t['task'], other], known)
            right = have[t['task']] <= gold[t['task']]
            moved = pick != t['task']
            outcome = ('won' if have[other] < gold[other] and not right else 'lost' if right else 'neutral') if moved else (
                'kept right' if right else 'kept wrong')
            tally[(t['task'], outcome)] += 1
            print(json.dumps(dict(id=rid, task=t['task'], step=t.get('step'), outcome=outcome), ensure_ascii=False), flush=True)
for k, v in sorted(tally.items()):
    print(variant, *k, v)
