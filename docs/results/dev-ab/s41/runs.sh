#!/bin/bash
# Session 41: the live runs behind dev-ab "Session 41" (Intel Xeon, one llama.cpp process at a time). BASE: a worktree
# of af450b9 (the planner before), CONTRAST: af450b9 with the twins' contrast only, NEW: af450b9 with both changes
# (the contrast, and the drawing's step words). All plan the current request file.
set -x
BASE=${BASE:?worktree of af450b9} CONTRAST=${CONTRAST:?} NEW=${NEW:?} R=${R:-runs}
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
S40=$(pwd)/docs/results/dev-ab/s40
# the twins' contrast: every request with a twin step in any raw answer of session 40's runs (its twin-*-ids)
(cd $CONTRAST && python benchmarks/planning_quality.py --set real --split dev --data $D --ids $(cat $S40/twin-dev-ids) --out $R/contrast-dev.json)
# the 12 new requests (r450-r461), before and after
(cd $BASE && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r453,r454,r455,r456,r457,r458,r459,r460,r461 --out $R/base-newdev.json)
(cd $NEW && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r453,r454,r455,r456,r457,r458,r459,r460,r461 --out $R/new-newdev.json)
(cd $BASE && python benchmarks/planning_quality.py --set real --split test --data $D --ids r450,r451,r452 --out $R/base-newtest.json)
# the test part: r007 (the step words act on its recorded answers), the new requests, the twin requests
(cd $NEW && python benchmarks/planning_quality.py --set real --split test --data $D --ids r007,r450,r451,r452,$(cat $S40/twin-test-ids) --out $R/new-test.json)
# r462-r467 (written after the first 12): the planner before (BASE), the committed one (COMMITTED: ff65d3a) and the
# half-pair question (HALF: ff65d3a with s41/half-pairs.diff); HALF also on r450-r452
COMMITTED=${COMMITTED:?} HALF=${HALF:?}
(cd $BASE && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r464,r465 --out $R/a-dev6.json)
(cd $BASE && python benchmarks/planning_quality.py --set real --split test --data $D --ids r462,r463,r466,r467 --out $R/a-test6.json)
(cd $COMMITTED && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r464,r465 --out $R/h0-dev.json)
(cd $COMMITTED && python benchmarks/planning_quality.py --set real --split test --data $D --ids r462,r463,r466,r467 --out $R/h0-test.json)
(cd $HALF && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r464,r465 --out $R/halfpairs-dev.json)
(cd $HALF && python benchmarks/planning_quality.py --set real --split test --data $D --ids r450,r451,r452,r462,r463,r466,r467 --out $R/halfpairs-test.json)
# whole parts: session 40's full runs with these rows in place
python docs/results/dev-ab/s41/merge.py dev $R/base-dev234.json.gz $S40/twin-dev-full.json.gz $R/base-newdev.json $R/a-dev6.json
python docs/results/dev-ab/s41/merge.py dev $R/current-dev234.json.gz $S40/twin-dev-full.json.gz $R/contrast-dev.json $R/new-newdev.json $R/h0-dev.json
python docs/results/dev-ab/s41/merge.py test $R/base-test233.json.gz $S40/twin-test-full.json.gz $R/base-newtest.json $R/a-test6.json
python docs/results/dev-ab/s41/merge.py test $R/current-test233.json.gz $S40/twin-test-full.json.gz $R/new-test.json $R/h0-test.json
python docs/results/dev-ab/s41/paired.py $R/base-dev234.json.gz $R/current-dev234.json.gz
python docs/results/dev-ab/s41/paired.py $R/base-test233.json.gz $R/current-test233.json.gz
