"""voice-activity-detection: frame-level speech probabilities merged into ``{"start", "end"}`` spans (seconds)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import TaskHandler, arg, open_audio

SPEECH_WORDS = ("speech", "voice", "speaking", "vocal")
NON_SPEECH_PREFIXES = ("non", "no-", "no_", "no ", "not")


def speech_label(id2label: dict[Any, str]) -> int | None:
    """The index of a "speech" label (not "non-speech"), or None when the labels are speakers."""
    for index, label in id2label.items():
        name = str(label).lower()
        if any(word in name for word in SPEECH_WORDS) and not name.startswith(NON_SPEECH_PREFIXES):
            return int(index)
    return None


def speech_probabilities(logits: np.ndarray, id2label: dict[Any, str]) -> np.ndarray:
    """Per-frame probability of speech from ``(frames, labels)`` logits.

    A speech/non-speech head: softmax, the speech column. A diarization head (one label per speaker,
    multi-label): someone speaks when any speaker's sigmoid is high.
    """
    index = speech_label(id2label)
    if index is not None:
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return shifted[:, index] / shifted.sum(axis=-1)
    return (1.0 / (1.0 + np.exp(-logits))).max(axis=-1)


def speech_spans(probabilities: np.ndarray, frame_seconds: float, threshold: float = 0.5,
                 min_gap: float = 0.0) -> list[dict[str, float]]:
    """Runs of frames at or above ``threshold`` as ``{"start", "end"}`` seconds; gaps up to ``min_gap`` are bridged."""
    spans: list[dict[str, float]] = []
    start = None
    active = list(probabilities >= threshold) + [False]  # a sentinel closes a run at the end
    for i, speaking in enumerate(active):
        if speaking and start is None:
            start = i
        elif not speaking and start is not None:
            span = {"start": round(start * frame_seconds, 3), "end": round(i * frame_seconds, 3)}
            if spans and span["start"] - spans[-1]["end"] <= min_gap:
                spans[-1]["end"] = span["end"]
            else:
                spans.append(span)
            start = None
    return spans


def voice_activity_detection(loaded: LoadedModel, call) -> dict[str, Any]:
    import torch

    rate = int(getattr(loaded.processor, "sampling_rate", None) or 16000)
    samples, rate = open_audio(call, rate)
    inputs = loaded.processor(samples, sampling_rate=rate, return_tensors="pt")
    with torch.inference_mode():
        logits = loaded.model(**loaded.to_device(inputs)).logits[0].float().cpu().numpy()
    duration = len(samples) / rate
    probabilities = speech_probabilities(logits, loaded.model.config.id2label)
    spans = speech_spans(probabilities, duration / max(1, len(probabilities)),
                         threshold=float(arg(call, "threshold", 0.5)), min_gap=0.1)
    spoken = sum(s["end"] - s["start"] for s in spans)
    text = (f"speech in {len(spans)} span(s), {spoken:.2f} s of {duration:.2f} s" if spans
            else f"no speech in {duration:.2f} s")
    return {"text": text, "data": spans}


HANDLERS = {
    "voice-activity-detection": TaskHandler(
        "audio-frame-classification",
        auto_loader("AutoModelForAudioFrameClassification", "AutoFeatureExtractor"),
        voice_activity_detection,
    ),
}
