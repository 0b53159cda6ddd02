"""text-ranking: a cross-encoder (reranker) scores each (query, text) pair; texts come back best first."""

from __future__ import annotations

from typing import Any

from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import (
    TaskHandler,
    as_list,
    required,
    task_name,
)

BATCH = 16  # pairs per forward pass: bounded memory whatever the number of texts


def relevance_scores(loaded: LoadedModel, query: str, texts: list[str]) -> list[float]:
    """One score in [0, 1] per text: sigmoid of a single-logit reranker, else the relevant label's probability."""
    import torch

    scores: list[float] = []
    for start in range(0, len(texts), BATCH):
        batch = texts[start:start + BATCH]
        inputs = loaded.processor([query] * len(batch), batch, padding=True, truncation=True, return_tensors="pt")
        with torch.inference_mode():
            logits = loaded.model(**loaded.to_device(inputs)).logits.float()
        if logits.shape[-1] == 1:
            scores.extend(torch.sigmoid(logits[:, 0]).tolist())
        else:
            scores.extend(logits.softmax(-1)[:, _relevant_label(loaded.model.config)].tolist())
    return scores


def _relevant_label(config: Any) -> int:
    """The label meaning "relevant" in a multi-label reranker: a named one, else the last (LABEL_1)."""
    for index, label in config.id2label.items():
        if str(label).lower() in {"relevant", "positive", "entailment", "true", "yes"}:
            return int(index)
    return config.num_labels - 1


def text_ranking(loaded: LoadedModel, call) -> dict[str, Any]:
    query = str(required(call, "query"))
    texts = as_list(required(call, "texts"))
    if not texts:
        raise TaskError(task_name(call), "no texts to rank")
    rows = [{"text": t, "score": float(s)} for t, s in zip(texts, relevance_scores(loaded, query, texts))]
    rows.sort(key=lambda row: row["score"], reverse=True)
    return {"text": rows[0]["text"], "data": rows}


HANDLERS = {
    "text-ranking": TaskHandler(
        "sequence-classifier", auto_loader("AutoModelForSequenceClassification", "AutoTokenizer"), text_ranking
    ),
}
