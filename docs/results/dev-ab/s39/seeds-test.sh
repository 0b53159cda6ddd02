#!/bin/bash
# Session 39: the vote (always) on the real test part, as three recorded draws (session 38's way): seed 0 is the
# README's Xeon run (current-real-test209), seed 1 over the whole part, seed 2 where the first two differ. The
# current planner with the wants check off (the planner of the seed-0 run: session 35's passes).
set -x
cd "$(git rev-parse --show-toplevel)"

export HUGGINGGPT_SHARED=../shared HUGGINGGPT_WANTS_CHECK=0
O=${R:-runs}; B=docs/results/planning-test-qwen2.5-coder-1.5b-live/current-real-test209.json.gz
python benchmarks/planning_quality.py --set real --split test --seed 1 --out $O/live-seed1-real-test.json > $O/seed1.log 2>&1
IDS=$(python docs/results/dev-ab/s38/disagree.py $B $O/live-seed1-real-test.json)
echo "$IDS" > $O/disagree-ids
python benchmarks/planning_quality.py --set real --split test --seed 2 --ids "$IDS" --out $O/live-seed2dis-real-test.json > $O/seed2.log 2>&1
python docs/results/dev-ab/s38/vote.py $B $O/live-seed1-real-test.json $O/live-seed2dis-real-test.json > $O/vote.log 2>&1
echo ALLDONE
