#!/bin/bash
# Session 44: the live runs and probes behind dev-ab "Session 44" (Intel Xeon, one llama.cpp process at a time), in the
# order they were made; each change was committed before its runs. Run from the repository root.
set -x
R=${R:-runs} S=docs/results/dev-ab/s44 S41=docs/results/dev-ab/s41 S43=docs/results/dev-ab/s43
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
real() { python benchmarks/planning_quality.py --set real --split $1 --data $D --ids $2 --out $3; }
tb() { req=$([ $1 = en ] || echo "--requests benchmarks/data/taskbench-$1.jsonl")
       python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 $req --ids $2 --out $3; }
# text generation after one made picture asked about against image-to-text: probes, then live
CT="Write a new text from the request's own words (a story, a poem, a reply, a tagline, a tip): no picture is read."
CI="Caption or describe what a picture shows, reading the picture itself."
FILES=1 python $S/capq.py dev "$CT" "$CI" > $R/capq-dev-files.log   # an earlier given picture counting too (not built)
FILES=1 python $S/capq.py tb "$CT" "$CI" docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/capq-tbdev-files.log
python $S/capq.py dev "$CT" "$CI" > $R/capq-dev.log
python $S/capq.py tb "$CT" "$CI" docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/capq-tbdev.log
real dev $(cat $S/cap-dev239-ids) $R/cap-dev.json
for l in en zh es; do tb $l $(cat $S/cap-tb-$l-ids) $R/cap-tb-$l.json; done
python $S41/merge.py dev $R/cap-dev239.json.gz $S43/final-dev239.json.gz $R/cap-dev.json
python docs/results/dev-ab/s43/tbmerge.py $R/cap-tb-zh157.json.gz docs/results/planning-test-qwen2.5-coder-1.5b-live/current-taskbench-test-zh.json.gz $R/cap-tb-zh.json $R/cap2-tb-zh.json
# (cap2: 16690264 planned again once only a task whose result is the picture counts; a detection had moved two steps)
# small talk planned as one task reading the whole message: probes (a yes/no question; then the one kept), then live
python $S/chatq.py dev > $R/chatq-dev.log
real dev $(cat $S/chat-dev239-ids) $R/chat-dev.json; real test $(cat $S/chat-test239-ids) $R/chat-test.json
python $S41/merge.py dev $R/chat-dev239.json.gz $R/cap-dev239.json.gz $R/chat-dev.json
python $S41/merge.py test $R/chat-test239.json.gz $S43/final-test239.json.gz $R/chat-test.json
# what video, sound or picture back (a two-answer question in place of s43's yes/no): probe only, not built
python $S/audio2q.py dev $S43/final-dev239.json.gz > $R/audio2q-dev.log
# a step reading a given file beside an unread new version of it, asked which it works on (chains.py): probes, live
python $S/chainq.py dev > $R/chainq-dev.log
python $S/chainq.py tb docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/chainq-tbdev.log
real dev $(cat $S/chain-dev239-ids) $R/chain-dev.json
for l in en zh es; do tb $l $(cat $S/chain-tb-$l-ids) $R/chain-tb-$l.json; done
python $S41/merge.py dev $R/chain-dev239.json.gz $R/chat-dev239.json.gz $R/chain-dev.json
for l in en zh es; do python $S43/tbmerge.py $R/chain-tb-$l.json.gz docs/results/planning-test-qwen2.5-coder-1.5b-live/current-taskbench-test-$l.json.gz $R/chain-tb-$l.json; done
# a last text generation reading results asked whether the user asks for it (probe only: "asked" every time)
python $S/restq.py dev > $R/restq-dev.log
# a drawing after one made picture asked about against an edit of it: probes, then live
CD="Draw a new picture from a text alone: no picture made before is changed."
CE="Edit what a picture shows as a text says: change, add, remove or replace something in it (a hat, another sky, another background)."
A=text-to-image B=image-text-to-image python $S/capq.py dev "$CD" "$CE" > $R/t2iq-dev.log
A=text-to-image B=image-text-to-image python $S/capq.py tb "$CD" "$CE" docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/t2iq-tbdev.log
real dev $(cat $S/t2i-dev239-ids) $R/t2i-dev.json; real test $(cat $S/t2i-test239-ids) $R/t2i-test.json
for l in en zh; do tb $l $(cat $S/t2i-tb-$l-ids) $R/t2i-tb-$l.json; done
# a step's own words or an earlier unread text result as its text (probe only: not built)
python $S/textq.py tb docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/textq-tbdev.log
python $S/textq.py dev > $R/textq-dev.log
# made pictures exclude condition maps (tools.table.map_makers): the requests either sibling can now ask about
real dev r294 $R/made-dev.json
python $S41/merge.py dev $R/final-dev239.json.gz $R/chain-dev239.json.gz $R/t2i-dev.json $R/made-dev.json
python $S41/merge.py test $R/final-test239.json.gz $R/chat-test239.json.gz $R/t2i-test.json
# which task does an edit step do: the edit or a drawing along a condition map (probes only, not built)
python $S/drawq.py dev > $R/drawq-dev.log          # stopped after 57 of 71 cases
python $S/drawq.py dev two > $R/drawq2-dev.log
python $S/drawq.py dev rot > $R/drawq3-dev.log    # the second question in every rotation: built (drawing_choice.py)
real dev $(cat $S/draw-dev239-ids) $R/draw-dev.json; real test $(cat $S/draw-test239-ids) $R/draw-test.json
for l in en zh es; do tb $l $(cat $S/draw-tb-$l-ids) $R/draw-tb-$l.json; done
