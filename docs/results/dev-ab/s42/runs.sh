#!/bin/bash
# Session 42: the live runs behind dev-ab "Session 42" (Intel Xeon, one llama.cpp process at a time). BASE: a worktree
# of c485fe5 (the planner before); run from the repository root of the commit after (NEW).
set -x
BASE=${BASE:?worktree of c485fe5} R=${R:-runs}
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
S41=$(pwd)/docs/results/dev-ab/s41
# the 11 new requests (r468-r478), before and after
(cd $BASE && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r468,r469,r474,r475,r478 --out $R/base-newdev.json)
(cd $BASE && python benchmarks/planning_quality.py --set real --split test --data $D --ids r470,r471,r472,r473,r476,r477 --out $R/base-newtest.json)
python benchmarks/planning_quality.py --set real --split dev --data $D --ids r468,r469,r474,r475,r478 --out $R/new-newdev.json
python benchmarks/planning_quality.py --set real --split test --data $D --ids r470,r471,r472,r473,r476,r477 --out $R/new-newtest.json
# the test requests the two changes act on (found by revalidating every recorded plan and scanning the choice repairs)
python benchmarks/planning_quality.py --set real --split test --data $D --ids r013,r243,r307,r219 --out $R/new-test4.json
# whole parts: session 41's with these rows in place
python $S41/merge.py dev $R/base-dev239.json.gz $S41/current-dev234.json.gz $R/base-newdev.json
python $S41/merge.py dev $R/current-dev239.json.gz $S41/current-dev234.json.gz $R/new-newdev.json
python $S41/merge.py test $R/base-test239.json.gz $S41/current-test233.json.gz $R/base-newtest.json
python $S41/merge.py test $R/current-test239.json.gz $S41/current-test233.json.gz $R/new-test4.json $R/new-newtest.json
python $S41/paired.py $R/base-dev239.json.gz $R/current-dev239.json.gz
python $S41/paired.py $R/base-test239.json.gz $R/current-test239.json.gz
# the sibling question (a detection or keypoint step asked about against VQA): probe on recorded dev plans, then
# every request with such a step (or VQA) in any recorded answer planned again (ids: those rows of current-*239)
python docs/results/dev-ab/s42/vqac.py docs/results/dev-ab/s42/current-dev239.json.gz docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/vqac-dev.log
python benchmarks/planning_quality.py --set real --split dev --data $D --ids r010,r014,r064,r067,r088,r161,r176,r188,r212,r226,r264,r294,r347,r368,r393,r468,r469 --out $R/sib-dev.json
python benchmarks/planning_quality.py --set real --split test --data $D --ids $(cat $R/sib-test239-ids) --out $R/sib-test.json
for l in en zh es; do
  req=$([ $l = en ] || echo "--requests benchmarks/data/taskbench-$l.jsonl")
  python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 $req --ids $(cat $R/sib-tb-$l-ids) --out $R/sib-tb-$l.json
  python docs/results/dev-ab/s42/tbpaired.py docs/results/planning-test-qwen2.5-coder-1.5b-live/current-taskbench-test-$l.json.gz $R/sib-tb-$l.json
done
python $S41/merge.py dev $R/final-dev239.json.gz $R/current-dev239.json.gz $R/sib-dev.json
python $S41/merge.py test $R/final-test239.json.gz $R/current-test239.json.gz $R/sib-test.json
python $S41/paired.py $R/base-dev239.json.gz $R/final-dev239.json.gz
python $S41/paired.py $R/base-test239.json.gz $R/final-test239.json.gz
# the text sibling (text-classification asked about against text2text-generation): probe on every recorded real dev
# run, then every request with either task in any recorded answer planned again
python docs/results/dev-ab/s42/t2tq.py > $R/t2tq-dev.log
python benchmarks/planning_quality.py --set real --split dev --data $D --ids $(cat $R/t2t-dev239-ids) --out $R/t2t-dev.json
python benchmarks/planning_quality.py --set real --split test --data $D --ids $(cat $R/t2t-test239-ids) --out $R/t2t-test.json
python $S41/merge.py dev $R/final-dev239.json.gz $R/final-dev239.json.gz $R/t2t-dev.json
python $S41/merge.py test $R/final-test239.json.gz $R/final-test239.json.gz $R/t2t-test.json
python $S41/paired.py $R/base-dev239.json.gz $R/final-dev239.json.gz
python $S41/paired.py $R/base-test239.json.gz $R/final-test239.json.gz
