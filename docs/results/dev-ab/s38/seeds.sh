#!/bin/bash
# The draws of session 38's vote (vote.py), planned by the planner of f672f12 with the wants check off (the
# planner of the session 36 baselines, s36/live-base-*, which are the first draws). Run from a checkout of f672f12.
export HUGGINGGPT_SHARED=../shared HUGGINGGPT_WANTS_CHECK=0
R=${R:-runs}; B=docs/results/dev-ab/s36; S=docs/results/dev-ab/s38
python benchmarks/planning_quality.py --set real --split dev --seed 1 --out $R/live-seed1-real-dev.json
IDS=$(python $S/disagree.py $B/live-base-real-dev.json.gz $R/live-seed1-real-dev.json)
python benchmarks/planning_quality.py --set real --split dev --seed 2 --ids "$IDS" --out $R/live-seed2dis-real-dev.json
python benchmarks/planning_quality.py --set taskbench --split dev --per-type 30 --seed 1 --out $R/live-seed1-tb-dev90.json
IDS=$(python $S/disagree.py $B/live-base-tb-dev90.json.gz $R/live-seed1-tb-dev90.json)
python benchmarks/planning_quality.py --set taskbench --split dev --per-type 30 --seed 2 --ids "$IDS" --out $R/live-seed2dis-tb-dev90.json
python $S/vote.py $B/live-base-real-dev.json.gz $R/live-seed1-real-dev.json $R/live-seed2dis-real-dev.json
python $S/vote.py $B/live-base-tb-dev90.json.gz $R/live-seed1-tb-dev90.json $R/live-seed2dis-tb-dev90.json
