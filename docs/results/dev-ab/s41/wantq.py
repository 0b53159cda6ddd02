"""Probe: how well a question asked alone finds a picture, sound or video the user wants back and the plan does
not make. For each request of a recorded run (planning_quality.py result files), each media kind that its final
plan makes none of and that no file of the request or its conversation has is asked about with each wording
variant (yes and no lettered, both orders, each scored as the model's whole reply, as ``outputs.confirmed_want``
asks). A case is positive when the gold plan makes that kind. Prints each case and, per variant, the confirmed
cases that are positive (hits) and negative (false alarms), and the smallest of the two orders' margins.

    python docs/results/dev-ab/s41/wantq.py RUN.json.gz [KINDS]   # KINDS: audio,image,video (default)
Run from the repository root."""
import gzip, json, os, sys
from collections import Counter
sys.path.insert(0, '.')
from benchmarks import planning_quality as pq
from hugginggpt.agent.plan.choices import LETTERS
from hugginggpt.agent.plan.context import input_kinds
from hugginggpt.eval.real_requests import load_real_requests
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from hugginggpt.tools.table import task_table

SYSTEM = "You read what a user asks for."
VARIANTS = {
    # the committed question (prompts/planning_wanted.md)
    "v0": ("A user's request: {request}\n\nDoes the user ask to get {what} back, made for them (not a file they give)?",
           {"image": "a picture", "audio": "a sound or spoken audio", "video": "a video"}),
    # the result named as the user meets it: seen, heard, watched
    "v1": ("A user's request: {request}\n\nWhen it is done, does the user ask to {what}?",
           {"image": "see a new picture", "audio": "hear something: words read or spoken aloud, a voice, music or a sound",
            "video": "watch a video"}),
    # the plan's results named, then the question
    "v2": ("A user's request: {request}\n\nA plan for it gives back only: {gives}.\n\nDoes the user also ask for {what}?",
           {"image": "a picture", "audio": "something to listen to (speech read aloud, a voice, music or a sound)",
            "video": "a video"}),
}
OPTIONS = (("yes", "no"), ("no", "yes"))

known = dict(task_table())
scorer = LlamaCppChatModel(model_path=pq.gguf_path('qwen2.5-coder-1.5b'), n_ctx=4096, n_threads=2).answer_scores
reqs = {r.id: r for r in load_real_requests(pq.REAL_REQUESTS)}
kinds = (sys.argv[2] if len(sys.argv) > 2 else "audio,image,video").split(",")
only = set(os.environ.get("VARIANTS", ",".join(VARIANTS)).split(","))


def gives(plan):
    made = []
    for t in plan:
        spec = known.get(t['task'])
        for k in (spec.outputs if spec else []):
            k = 'text' if k in ('data',) else k
            if k not in made:
                made.append(k)
    return ", ".join(made) or "nothing"


def ask(variant, request, kind, plan):
    template, what = VARIANTS[variant]
    margins = []
    for options in OPTIONS:
        lines = "\n".join(f"{letter}) {option}" for letter, option in zip(LETTERS, options))
        human = template.format(request=request, what=what[kind], gives=gives(plan)) + f"\n{lines}\n\nAnswer with the letter."
        scores = scorer([("system", SYSTEM), ("human", human)], list(LETTERS[:2]))
        yes = options.index("yes")
        margins.append(scores[yes] - scores[1 - yes])
    return min(margins)


tally = Counter()
d = json.load(gzip.open(sys.argv[1]) if sys.argv[1].endswith('.gz') else open(sys.argv[1]))
for row in d['rows']:
    r = reqs[row['id']]
    plan = row['harness'].get('plan') or []
    made = {k for t in plan if t['task'] in known for k in known[t['task']].outputs}
    context = " ".join([r.request, *r.files, *(m.get('content', '') for m in r.history)])
    given = input_kinds(context)
    gold = {k for t in r.plan for k in known[t['task']].outputs}
    for kind in kinds:
        if kind in made or kind in given:
            continue
        positive = kind in gold
        out = {"id": r.id, "kind": kind, "gold": positive}
        for variant in VARIANTS:
            if variant not in only:
                continue
            margin = ask(variant, r.request, kind, plan)
            out[variant] = round(margin, 2)
            tally[(variant, "hit" if margin > 0 and positive else "false alarm" if margin > 0 else
                   "missed" if positive else "quiet")] += 1
        print(json.dumps(out, ensure_ascii=False), flush=True)
for key, n in sorted(tally.items()):
    print(*key, n)
