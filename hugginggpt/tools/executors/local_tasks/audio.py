"""Audio tasks: speech recognition, audio classification, text-to-speech."""

from __future__ import annotations

from typing import Any

from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.local_tasks.common import (
    arg,
    open_audio,
    required,
    scored_labels,
    task_name,
    top_label_text,
)
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_handler


def _pipeline_audio(pipe, call) -> dict[str, Any]:
    """The call's audio resampled to the model's rate, in the form audio pipelines take."""
    rate = getattr(pipe.feature_extractor, "sampling_rate", None) or 16000
    samples, rate = open_audio(call, rate)
    return {"raw": samples, "sampling_rate": rate}


def speech_recognition(pipe, call) -> dict[str, Any]:
    out = pipe(_pipeline_audio(pipe, call))
    return {"text": str(out["text"]).strip()}


def audio_classification(pipe, call) -> dict[str, Any]:
    rows = scored_labels(pipe(_pipeline_audio(pipe, call), top_k=int(arg(call, "top_k", 5))))
    return {"text": top_label_text(rows), "data": rows}


def text_to_speech(pipe, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_audio

    text = required(call, "text")
    tokenizer = getattr(pipe, "tokenizer", None)
    if tokenizer is not None and not tokenizer(text)["input_ids"]:
        # e.g. a character-level (MMS/VITS) model and a text in another script: it would crash inside
        raise TaskError(task_name(call), f"the model cannot pronounce any character of {text[:60]!r}")
    out = pipe(text)
    return {"audio": save_audio(out["audio"], out["sampling_rate"], call.workspace)}


HANDLERS = {
    "automatic-speech-recognition": pipeline_handler("automatic-speech-recognition", speech_recognition),
    "audio-classification": pipeline_handler("audio-classification", audio_classification),
    "text-to-speech": pipeline_handler("text-to-audio", text_to_speech),
    "text-to-audio": pipeline_handler("text-to-audio", text_to_speech),
}
