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
