#!/bin/bash
# usage: replayall.sh CODE_DIR TAG [files...] : replay recorded dev answers through CODE_DIR's planner
code=$1; tag=$2; shift 2
files=${@:-desc-dev-real208 qademo-tb-dev qademo-tb2-dev base-tb-dev-zh twice-tb-dev-es}
cd $code
for f in $files; do
  HUGGINGGPT_SHARED=/work/shared /work/venv/bin/python /work/main/docs/results/dev-ab/s15/replay.py /work/runs/s31/base/$f.json /work/runs/s31/$tag-$f.json > /work/runs/s31/$tag-$f.log 2>&1 &
done
wait
