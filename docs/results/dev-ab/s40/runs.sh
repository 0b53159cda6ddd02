#!/bin/bash
# Session 40: the live runs behind dev-ab "Session 40" (Intel Xeon, one llama.cpp process at a time).
# NEW: a worktree of the planner measured, BASE: one of the planner before it (01c259f); both plan the same
# request file (the current benchmarks/data/real_requests.jsonl). The base of the old dev requests is the dev run of
# 8a8bb8e, in which the change of that commit never acted (no repair of it in any row): base-dev-full.json.gz.
set -x
NEW=${NEW:?worktree of the new planner} BASE=${BASE:?worktree of 01c259f} R=${R:-runs}
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
NEWDEV=r438,r439,r440,r441,r442,r443,r444,r447,r449
NEWTEST=r418,r419,r420,r421,r424,r425,r426,r427,r428,r429,r430,r431,r432,r436,r445,r446,r448
# made-from (9fbe462): the dev candidates of cands.py and the new requests; then the base on the new requests
(cd $NEW && python benchmarks/planning_quality.py --set real --split dev --data $D --ids r422,r433,r435,$NEWDEV --out $R/new-dev.json)
(cd $BASE && python benchmarks/planning_quality.py --set real --split dev --data $D --ids $NEWDEV --out $R/base-dev.json)
(cd $NEW && python benchmarks/planning_quality.py --set real --split test --data $D --ids r005,r017,r023,$NEWTEST --out $R/new-test.json)
(cd $BASE && python benchmarks/planning_quality.py --set real --split test --data $D --ids $NEWTEST --out $R/base-test.json)
(cd $NEW && python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 --ids 79397398 --out $R/new-tb-en.json)
# twins (dc65a3a): every request with a text-to-speech, text-to-audio, audio-classification or voice-activity-detection
# step in any raw answer of the made-from runs (twin-*-ids)
(cd $NEW && python benchmarks/planning_quality.py --set real --split dev --data $D --ids $(cat $R/twin-dev-ids) --out $R/twin-dev.json)
(cd $NEW && python benchmarks/planning_quality.py --set real --split test --data $D --ids $(cat $R/twin-test-ids) --out $R/twin-test.json)
