"""Video tasks: classification (VideoMAE, TimeSformer, ViViT) and chat about a video (VLMs over sampled frames)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel
from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    named_errors,
    required,
    scored_labels,
    top_label_text,
)
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_handler
from hugginggpt.tools.executors.local_tasks.video_frames import read_frames

DEFAULT_FRAMES = 16  # VideoMAE's clip length, for models whose config does not say


def open_video(call, count: int) -> list:
    return named_errors(call, read_frames, required(call, "video"), count)


def load_video_classifier(folder: Path, options: LoadOptions) -> LoadedModel:
    """The model and its frame processor (an image processor; a video processor when only that exists)."""
    import transformers

    model = transformers.AutoModelForVideoClassification.from_pretrained(folder, dtype=options.dtype)
    try:
        processor = transformers.AutoImageProcessor.from_pretrained(folder)
    except (OSError, ValueError):
        processor = transformers.AutoVideoProcessor.from_pretrained(folder)
    return LoadedModel(model.to(options.device).eval(), processor, options.device)


def video_classification(loaded: LoadedModel, call) -> dict[str, Any]:
    import torch

    frames = open_video(call, int(getattr(loaded.model.config, "num_frames", None) or DEFAULT_FRAMES))
    inputs = loaded.processor(frames, return_tensors="pt")
    with torch.inference_mode():
        probabilities = loaded.model(**loaded.to_device(inputs)).logits[0].float().softmax(-1)
    top = probabilities.topk(min(int(arg(call, "top_k", 5)), probabilities.numel()))
    labels = loaded.model.config.id2label
    rows = scored_labels([{"label": labels[int(i)], "score": float(s)} for s, i in zip(top.values, top.indices)])
    return {"text": top_label_text(rows), "data": rows}


def video_text_to_text(pipe, call) -> dict[str, Any]:
    """The frames go to the image-text-to-text pipeline as a sequence of images before the question."""
    frames = open_video(call, max(1, int(arg(call, "num_frames", 8))))
    content = [{"type": "image", "image": frame} for frame in frames]
    content.append({"type": "text", "text": required(call, "text")})
    out = pipe(text=[{"role": "user", "content": content}],
               max_new_tokens=int(arg(call, "max_new_tokens", 128)), return_full_text=False)
    return {"text": str(out[0]["generated_text"]).strip()}


HANDLERS = {
    "video-classification": TaskHandler("video-classification", load_video_classifier, video_classification),
    "video-text-to-text": pipeline_handler("image-text-to-text", video_text_to_text),
}
