#!/bin/bash
# This machine (AMD EPYC) draws other answers than session 44's Intel Xeon: the same ids planned by the session's
# starting commit (1fea0dd, a worktree at ../base45) on this machine, for paired figures on one machine.
set -x
S=$(pwd)/docs/results/dev-ab/s45 R=${R:-/work/runs45}
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-$(pwd)/../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
ids() { cat "$@" | tr ',' '\n' | awk 'NF && !seen[$0]++' | paste -sd, -; }
cd ../base45
export PYTHONPATH=$(pwd)
python benchmarks/planning_quality.py --set real --split dev --data $D --ids $(ids $S/sib-dev239-ids $S/rep-dev239-ids) --out $R/base-dev.json
python benchmarks/planning_quality.py --set real --split test --data $D --ids $(ids $S/sib-test239-ids $S/rep-test239-ids) --out $R/base-test.json
for l in en zh es; do
  req=$([ $l = en ] || echo "--requests benchmarks/data/taskbench-$l.jsonl")
  python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 $req --ids $(ids $S/sib-tb-$l-ids $S/rep-tb-$l-ids) --out $R/base-tb-$l.json
done
