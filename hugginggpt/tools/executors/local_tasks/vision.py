"""Image tasks: classification, detection, segmentation, depth, zero-shot, masks, embeddings."""

from __future__ import annotations

from typing import Any

import numpy as np

from hugginggpt.tools.executors.local_tasks.common import (
    arg,
    as_list,
    jsonable,
    open_image,
    required,
    scored_labels,
    top_label_text,
)
from hugginggpt.tools.executors.local_tasks.drawing import draw_boxes, overlay_masks
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_handler


def _save(image, call) -> str:
    from hugginggpt.tools.resources import save_image

    return save_image(image, call.workspace)


def image_classification(pipe, call) -> dict[str, Any]:
    rows = scored_labels(pipe(open_image(call), top_k=int(arg(call, "top_k", 5))))
    return {"text": top_label_text(rows), "data": rows}


def zero_shot_image_classification(pipe, call) -> dict[str, Any]:
    labels = as_list(required(call, "candidate_labels"))
    rows = scored_labels(pipe(open_image(call), candidate_labels=labels))
    return {"text": top_label_text(rows), "data": rows}


def _detections_result(image, detections, call) -> dict[str, Any]:
    rows = [
        {"label": str(d["label"]), "score": float(d["score"]), "box": {k: int(v) for k, v in d["box"].items()}}
        for d in detections
    ]
    rows.sort(key=lambda row: row["score"], reverse=True)
    text = ", ".join(f"{r['label']} ({r['score']:.2f})" for r in rows) or "no objects found"
    return {"text": text, "image": _save(draw_boxes(image, rows), call), "data": rows}


def object_detection(pipe, call) -> dict[str, Any]:
    image = open_image(call)
    return _detections_result(image, pipe(image, threshold=float(arg(call, "threshold", 0.5))), call)


def zero_shot_object_detection(pipe, call) -> dict[str, Any]:
    image = open_image(call)
    labels = as_list(required(call, "candidate_labels"))
    found = pipe(image, candidate_labels=labels, threshold=float(arg(call, "threshold", 0.1)))
    return _detections_result(image, found, call)


def image_segmentation(pipe, call) -> dict[str, Any]:
    image = open_image(call)
    subtask = arg(call, "subtask")
    segments = pipe(image, **({"subtask": subtask} if subtask else {}))
    total = image.size[0] * image.size[1]
    rows = [
        {
            "label": str(s["label"]),
            "score": None if s.get("score") is None else float(s["score"]),
            "area": round(float(np.count_nonzero(np.asarray(s["mask"]))) / total, 4),
        }
        for s in segments
    ]
    text = ", ".join(f"{r['label']} ({r['area']:.0%})" for r in rows) or "no segments"
    overlay = overlay_masks(image, [s["mask"] for s in segments])
    return {"text": text, "image": _save(overlay, call), "data": rows}


def depth_estimation(pipe, call) -> dict[str, Any]:
    out = pipe(open_image(call))
    depth = np.asarray(out["predicted_depth"].squeeze().float().cpu().numpy())
    return {
        "image": _save(out["depth"], call),
        "data": {"min": float(depth.min()), "max": float(depth.max()), "shape": list(depth.shape)},
    }


def mask_generation(pipe, call) -> dict[str, Any]:
    image = open_image(call)
    out = pipe(image, points_per_batch=64)
    masks = [np.asarray(m) for m in out["masks"]]
    scores = [float(s) for s in jsonable(out["scores"])]
    from PIL import Image

    overlay = overlay_masks(image, [Image.fromarray(m.astype(np.uint8) * 255) for m in masks])
    total = image.size[0] * image.size[1]
    rows = [{"score": s, "area": round(float(m.sum()) / total, 4)} for m, s in zip(masks, scores)]
    return {"image": _save(overlay, call), "data": rows}


def image_feature_extraction(pipe, call) -> dict[str, Any]:
    return {"data": jsonable(pipe(open_image(call))[0])}


HANDLERS = {
    "image-classification": pipeline_handler("image-classification", image_classification),
    "zero-shot-image-classification": pipeline_handler("zero-shot-image-classification", zero_shot_image_classification),
    "object-detection": pipeline_handler("object-detection", object_detection),
    "zero-shot-object-detection": pipeline_handler("zero-shot-object-detection", zero_shot_object_detection),
    "image-segmentation": pipeline_handler("image-segmentation", image_segmentation),
    "depth-estimation": pipeline_handler("depth-estimation", depth_estimation),
    "mask-generation": pipeline_handler("mask-generation", mask_generation),
    "image-feature-extraction": pipeline_handler("image-feature-extraction", image_feature_extraction),
}
