"""Extractive question answering through the model class (transformers 5 removed its pipeline).

The answer is the context span whose start and end logits score highest, as the old pipeline did.
"""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import TaskHandler, required

MAX_ANSWER_TOKENS = 30


def best_span(start_logits, end_logits, context_mask, max_len: int = MAX_ANSWER_TOKENS) -> tuple[int, int, float]:
    """(start, end, probability) of the best span inside the context, end >= start, at most ``max_len`` long."""
    import torch

    start = torch.softmax(start_logits.masked_fill(~context_mask, float("-inf")), dim=-1)
    end = torch.softmax(end_logits.masked_fill(~context_mask, float("-inf")), dim=-1)
    scores = torch.triu(start[:, None] * end[None, :])  # [i, j]: start i, end j >= i
    scores = scores - torch.triu(scores, diagonal=max_len)  # drop spans longer than max_len
    flat = int(torch.argmax(scores))
    i, j = divmod(flat, scores.shape[1])
    return i, j, float(scores[i, j])


def answer_question(reader: LoadedModel, call) -> dict[str, Any]:
    import torch

    question, context = required(call, "question"), required(call, "context")
    enc = reader.processor(question, context, return_tensors="pt", truncation="only_second",
                           return_offsets_mapping=True)
    offsets = enc.pop("offset_mapping")[0]
    context_mask = torch.tensor([seq_id == 1 for seq_id in enc.sequence_ids(0)])
    with torch.inference_mode():
        out = reader.model(**enc.to(reader.device))
    i, j, score = best_span(out.start_logits[0].float().cpu(), out.end_logits[0].float().cpu(), context_mask)
    begin, end = int(offsets[i][0]), int(offsets[j][1])
    answer = context[begin:end]
    return {"text": answer, "data": {"answer": answer, "score": score, "start": begin, "end": end}}


HANDLERS = {
    "question-answering": TaskHandler(
        "extractive-qa", auto_loader("AutoModelForQuestionAnswering", "AutoTokenizer"), answer_question
    )
}
