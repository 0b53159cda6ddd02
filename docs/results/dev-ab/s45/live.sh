#!/bin/bash
# Session 45's live runs (after the probes of runs.sh), from the repository root: the ten new requests planned by the
# session's starting commit (1fea0dd, a worktree at ../base45) and by the change; then every request a change can act
# on (the ids files) planned by the change.
set -x
S=docs/results/dev-ab/s45 R=${R:-/work/runs45}
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-$(pwd)/../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
real() { python benchmarks/planning_quality.py --set real --split $1 --data $D --ids $2 --out $3; }
tb() { req=$([ $1 = en ] || echo "--requests benchmarks/data/taskbench-$1.jsonl")
       python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 $req --ids $2 --out $3; }
ids() { cat "$@" | tr ',' '\n' | awk 'NF && !seen[$0]++' | paste -sd, -; }
NEWDEV=r481,r482,r483,r487,r488 NEWTEST=r479,r480,r484,r485,r486
(cd ../base45 && PYTHONPATH=$(pwd) python benchmarks/planning_quality.py --set real --split dev --data $D --ids $NEWDEV --out $R/new-base-dev.json)
(cd ../base45 && PYTHONPATH=$(pwd) python benchmarks/planning_quality.py --set real --split test --data $D --ids $NEWTEST --out $R/new-base-test.json)
real dev $NEWDEV,$(ids $S/sib-dev239-ids $S/rep-dev239-ids) $R/s45-dev.json
real test $NEWTEST,$(ids $S/sib-test239-ids $S/rep-test239-ids) $R/s45-test.json
for l in en zh es; do tb $l $(ids $S/sib-tb-$l-ids $S/rep-tb-$l-ids) $R/s45-tb-$l.json; done
