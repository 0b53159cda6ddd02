"""Sentence embeddings on this machine: one vector per text, pooled from the model's token vectors the way
the model's own sentence-transformers configuration says.

A sentence-transformers folder lists its modules in ``modules.json`` (a Transformer, then a Pooling module
whose ``config.json`` names the pooling modes, then optionally a Normalize module); the Transformer's
``sentence_bert_config.json`` gives the longest input. ``feature-extraction`` and ``sentence-similarity``
share one loaded model and one pooling; a folder without that configuration (a plain encoder) gets the
mean of its token vectors, and the result says which pooling it used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.executors.local_tasks.common import LoadOptions, TaskHandler, required

#: sentence-transformers' pooling modes, in the order its Pooling module concatenates them, by config key.
MODES = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
#: The sentence-transformers module types this executor runs (their class name, the type's last part).
KNOWN_MODULES = {"Transformer", "Pooling", "Normalize"}


@dataclass(frozen=True)
class Pooling:
    """How token vectors become one vector: ``modes`` (concatenated in this order), then L2 ``normalize``;
    ``declared`` False when the folder says nothing and the mean is assumed; ``max_length``: the most
    tokens read (``sentence_bert_config.json``), ``lower_case``: the text is lower-cased first."""

    modes: tuple[str, ...] = ("mean",)
    normalize: bool = False
    max_length: int | None = None
    lower_case: bool = False
    declared: bool = False


def read_pooling(folder: Path) -> Pooling:
    """The pooling of a model folder, from its ``modules.json`` and module configs (mean when it has none)."""
    listing = folder / "modules.json"
    if not listing.is_file():
        return Pooling()
    try:
        modules = json.loads(listing.read_text(encoding="utf-8"))
        kinds = {str(module["type"]).rsplit(".", 1)[-1]: folder / str(module.get("path") or "") for module in modules}
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ModelLoadError(None, f"{listing} is not a sentence-transformers module list: {exc}") from None
    unknown = sorted(set(kinds) - KNOWN_MODULES)
    if unknown:
        raise ModelLoadError(None, f"the sentence-transformers model in {folder} has a {', '.join(unknown)} module, "
                                   "which the local executor does not run (it runs Transformer, Pooling and "
                                   "Normalize); run it on a remote endpoint (--endpoint, e.g. a TEI server)")
    modes: tuple[str, ...] = ("mean",)
    if "Pooling" in kinds:
        config = _json(kinds["Pooling"] / "config.json")
        modes = tuple(mode for key, mode in MODES.items() if config.get(key))
        if not modes:
            raise ModelLoadError(None, f"{kinds['Pooling'] / 'config.json'} turns on no pooling mode "
                                       f"(one of {', '.join(MODES)})")
    transformer = _json(kinds.get("Transformer", folder) / "sentence_bert_config.json", missing_ok=True)
    max_length = transformer.get("max_seq_length")
    return Pooling(modes=modes, normalize="Normalize" in kinds, declared=True,
                   max_length=int(max_length) if isinstance(max_length, int) and max_length > 0 else None,
                   lower_case=bool(transformer.get("do_lower_case")))


def _json(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    if missing_ok and not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(None, f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ModelLoadError(None, f"{path} is not a JSON object")
    return data


def pool(tokens: Any, pooling: Pooling) -> list[float]:
    """One vector from a text's token vectors (a ``(tokens, width)`` array, every token attended)."""
    import numpy as np

    tokens = np.asarray(tokens, dtype=np.float32)
    count = tokens.shape[0]
    weights = np.arange(1, count + 1, dtype=np.float32)[:, None]
    parts = {
        "cls": lambda: tokens[0],
        "max": lambda: tokens.max(axis=0),
        "mean": lambda: tokens.mean(axis=0),
        "mean_sqrt_len": lambda: tokens.sum(axis=0) / math.sqrt(count),
        "weightedmean": lambda: (tokens * weights).sum(axis=0) / weights.sum(),
        "lasttoken": lambda: tokens[-1],
    }
    vector = np.concatenate([parts[mode]() for mode in pooling.modes])
    if pooling.normalize:
        vector = vector / max(float(np.linalg.norm(vector)), 1e-12)  # as torch's F.normalize
    return [float(x) for x in vector]


@dataclass
class Embedder:
    """A loaded feature-extraction pipeline and the model's pooling."""

    pipe: Any
    pooling: Pooling

    def embed(self, text: str) -> list[float]:
        pooling = self.pooling
        tokenize: dict[str, Any] = {"truncation": True}
        if pooling.max_length:
            tokenize["max_length"] = pooling.max_length
        hidden = self.pipe(text.lower() if pooling.lower_case else text, return_tensors=True, tokenize_kwargs=tokenize)
        return pool(hidden[0].float().numpy(), pooling)


def load(folder: Path, options: LoadOptions) -> Embedder:
    from transformers import pipeline

    pooling = read_pooling(folder)  # before the weights: a module it cannot run is said at once
    return Embedder(pipeline("feature-extraction", model=str(folder), device=options.device, dtype=options.dtype),
                    pooling)


def feature_extraction(embedder: Embedder, call: Any) -> dict[str, Any]:
    """The text's one vector as ``data`` (the task table's ``returns`` says how it is pooled)."""
    return {"data": embedder.embed(str(required(call, "text")))}


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def sentence_similarity(embedder: Embedder, call: Any) -> dict[str, Any]:
    """The cosine of the source sentence's embedding with each sentence's (the model's own pooling)."""
    source = embedder.embed(str(required(call, "source_sentence")))
    value = required(call, "sentences")
    sentences = [value] if isinstance(value, str) else [str(s) for s in value]
    scores = [_cosine(source, embedder.embed(s)) for s in sentences]
    best = max(range(len(scores)), key=scores.__getitem__)
    return {"text": f"most similar: {sentences[best]!r} ({scores[best]:.3f})", "data": scores}


HANDLERS: dict[str, TaskHandler] = {
    "feature-extraction": TaskHandler("sentence-embedding", load, feature_extraction),
    "sentence-similarity": TaskHandler("sentence-embedding", load, sentence_similarity),
}
