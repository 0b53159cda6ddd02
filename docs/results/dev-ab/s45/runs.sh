#!/bin/sh
# Session 45's probes and live runs, in the order they ran (one llama.cpp process at a time), from the repository root.
export HUGGINGGPT_SHARED=${HUGGINGGPT_SHARED:-$PWD/../shared}
D=docs/results/dev-ab
python $D/s45/pairq.py dev > $D/s45/pairq-dev.log 2>&1
python $D/s43/sibq.py dev text-ranking summarization \
  'Order several texts (search results, passages, answers) by how well each fits a query the user gives: the texts stay as they are.' \
  'Shorten one text to its main points: the answer is a new, shorter text.' > $D/s45/rankq-dev.log 2>&1
python $D/s43/sibq.py dev text2text-generation question-answering \
  'Rewrite a text as asked (paraphrase it, fix its grammar, make it formal or polite, simplify it): the answer is a new text.' \
  'Answer a question about a passage the user gives: the answer is found in that passage.' > $D/s45/qaq-dev.log 2>&1
python $D/s43/sibq.py dev image-segmentation image-to-image \
  'Split a picture into labelled regions: a mask of where each thing is; the picture itself is not changed.' \
  'Enhance or restyle a whole picture without changing what it shows: upscale, sharpen, restore, colorize, a painting style.' > $D/s45/segq-dev.log 2>&1
python $D/s45/kindq.py dev > $D/s45/kindq-dev.log 2>&1
python $D/s45/kindq.py dev all > $D/s45/kindq-dev-all.log 2>&1
python $D/s43/tbq.py image-segmentation image-to-image \
  'Split a picture into labelled regions: a mask of where each thing is; the picture itself is not changed.' \
  'Enhance or restyle a whole picture without changing what it shows: upscale, sharpen, restore, colorize, a painting style.' \
  $D/s36/live-base-tb-dev90.json.gz $D/s25/base-tb-dev-zh.json $D/s25/base-tb-dev-es.json > $D/s45/segq-tbdev.log 2>&1
python $D/s45/giftq.py dev > $D/s45/giftq-dev.log 2>&1
