#!/bin/bash
# Session 43: the live runs and probes behind dev-ab "Session 43" (Intel Xeon, one llama.cpp process at a time), in the
# order they were made; each change was committed before its runs. Run from the repository root.
set -x
R=${R:-runs} S=docs/results/dev-ab/s43 S41=docs/results/dev-ab/s41 S42=docs/results/dev-ab/s42
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-../shared}
D=$(pwd)/benchmarks/data/real_requests.jsonl
real() { python benchmarks/planning_quality.py --set real --split $1 --data $D --ids $2 --out $3; }
tb() { req=$([ $1 = en ] || echo "--requests benchmarks/data/taskbench-$1.jsonl")
       python benchmarks/planning_quality.py --set taskbench --split test --per-type 1000 $req --ids $2 --out $3; }
# zero-shot classification asked about against text classification: probes, then live
python $S/zsq.py dev > $R/zsq-dev2.log
python $S42/t2tq.py "Judge a text with a trained model's fixed labels (sentiment, toxicity, spam): the text itself stays as it is." > $R/t2tq2-dev.log
real dev $(cat $S/zs-dev239-ids) $R/zs-dev.json; real test $(cat $S/zs-test239-ids) $R/zs-test.json
python $S41/merge.py dev $R/zs-dev239.json.gz $S42/final-dev239.json.gz $R/zs-dev.json
python $S41/merge.py test $R/zs-test239.json.gz $S42/final-test239.json.gz $R/zs-test.json
# half pairs beside an edit (pass half-pairs): the three requests whose recorded plans have the shape
real test r450,r451,r452 $R/hp-test.json
# a chain continued from one of alike listed steps: every request whose words write a list of files
real dev $(cat $S/lists-dev239-ids) $R/lists-dev.json; real test $(cat $S/lists-test239-ids) $R/lists-test.json
python $S41/merge.py dev $R/lists-dev239.json.gz $R/zs-dev239.json.gz $R/lists-dev.json
python $S41/merge.py test $R/lists-test239.json.gz $R/zs-test239.json.gz $R/hp-test.json $R/lists-test.json
# image classification asked about against object detection
python $S/sibq.py dev image-classification object-detection "Name what a picture shows with a trained model's fixed classes (which animal, object, breed or scene): one label for the whole picture." "Find each object in a picture, with a box and a label: where things are and how many." > $R/icodq-dev.log
real dev $(cat $S/icod-dev239-ids) $R/icod-dev.json; real test $(cat $S/icod-test239-ids) $R/icod-test.json
for l in en zh es; do tb $l $(cat $S/icod-tb-$l-ids) $R/icod-tb-$l.json; done
python $S41/merge.py dev $R/icod-dev239.json.gz $R/lists-dev239.json.gz $R/icod-dev.json
python $S41/merge.py test $R/icod-test239.json.gz $R/lists-test239.json.gz $R/icod-test.json
# an edit asked about against image-to-image
CE="Edit what a picture shows as a text says: change, add, remove or replace something in it (a hat, another sky, another background)."
CR="Enhance or restyle a whole picture without changing what it shows: upscale, sharpen, restore, colorize, a painting style."
python $S/sibq.py dev image-text-to-image image-to-image "$CE" "$CR" > $R/editq-dev.log
python $S/sibq.py dev image-to-image image-text-to-image "$CR" "$CE" > $R/restyleq-dev.log
python $S/tbq.py image-text-to-image image-to-image "$CE" "$CR" docs/results/dev-ab/s36/live-base-tb-dev90.json.gz > $R/editq-tbdev.log
real dev $(cat $S/edit-dev239-ids) $R/edit-dev.json; real test $(cat $S/edit-test239-ids) $R/edit-test.json
for l in en zh es; do tb $l $(cat $S/edit-tb-$l-ids) $R/edit-tb-$l.json; done
python $S41/merge.py dev $R/final-dev239.json.gz $R/icod-dev239.json.gz $R/edit-dev.json
python $S41/merge.py test $R/final-test239.json.gz $R/icod-test239.json.gz $R/edit-test.json
python $S41/paired.py $S42/final-dev239.json.gz $R/final-dev239.json.gz
python $S41/paired.py $S42/final-test239.json.gz $R/final-test239.json.gz
# TaskBench whole parts (session 42's current files, the rows planned again in place)
L=docs/results/planning-test-qwen2.5-coder-1.5b-live
for l in en zh es; do python $S/tbmerge.py $R/current-taskbench-test-$l.json.gz $L/current-taskbench-test-$l.json.gz $R/icod-tb-$l.json $R/edit-tb-$l.json; done
# probes not built
python $S/sibq.py dev video-text-to-text video-classification "Answer a question or follow an instruction about a video in words: describe it, explain what happens, list its steps." "Name the action or event a video shows with a trained model's fixed classes: one label." > $R/vcq-dev.log
python $S/sibq.py dev image-text-to-text image-to-text "Answer an instruction or question about a picture at length with a vision-language model: explain, suggest or reason about what it shows." "Write a caption for a picture, or read out the text written in it: nothing is asked about it." > $R/i2tq-dev.log
python $S/sibq.py dev text-to-video text-to-audio "Generate a video clip of what a text describes: moving pictures, no sound." "Generate music or sound effects that a text describes (no words are spoken)." > $R/t2vq-dev.log
python $S/audioq.py dev $R/zs-dev239.json.gz > $R/audioq-dev.log
