#!/bin/bash
# replay2.sh CODE TAG: the recorded answers of each file through CODE's planner (no LLM), nice'd, one at a time
code=$1; tag=$2
cd $code
for f in qademo-tb-dev qademo-tb2-dev base-tb-dev-zh twice-tb-dev-es tb-test-en tb-test-zh tb-test-es; do
  HUGGINGGPT_SHARED=/work/shared nice -n 19 /work/venv/bin/python /work/main/docs/results/dev-ab/s15/replay.py /work/runs/s31/head-$f.json /tmp/s33/$tag-$f.json > /tmp/s33/$tag-$f.log 2>&1
done
for f in jf-dev208 jf-test209; do
  HUGGINGGPT_SHARED=/work/shared nice -n 19 /work/venv/bin/python /work/main/docs/results/dev-ab/s15/replay.py /tmp/s33/$f.json /tmp/s33/$tag-$f.json > /tmp/s33/$tag-$f.log 2>&1
done
