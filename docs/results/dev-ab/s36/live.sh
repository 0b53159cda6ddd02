#!/bin/bash
export HUGGINGGPT_SHARED=/work/shared
R=/work/runs/s36
run() { # snapshot label args...
  local snap=$1 label=$2; shift 2
  echo "start $label $(date)" >> $R/live.log
  (cd /work/snap/$snap && flock /tmp/llama.lock /work/venv/bin/python benchmarks/planning_quality.py "$@" --out $R/live-$label.json > $R/live-$label.log 2>&1)
  echo "end $label rc=$? $(date)" >> $R/live.log
}
run s36base base-real-dev --set real --split dev
run s36desc desc-real-dev --set real --split dev
run s36desc desc-tb-dev90 --set taskbench --split dev --per-type 30
run s36base base-tb-dev90 --set taskbench --split dev --per-type 30
