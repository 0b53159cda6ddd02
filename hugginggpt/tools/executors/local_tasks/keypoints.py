"""keypoint-detection: interest points (SuperPoint-style detectors) with scores, drawn on a copy of the image."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import TaskHandler, arg, open_image

DEFAULT_TOP_K = 100  # keypoints returned; detectors find hundreds, an LLM needs the strongest few


def draw_keypoints(image: Image.Image, points: list[dict[str, Any]]) -> Image.Image:
    """A copy of ``image`` with a small circle on each ``{"x", "y"}`` point."""
    canvas = image.convert("RGB").copy()
    pen = ImageDraw.Draw(canvas)
    radius = max(1, min(canvas.size) // 100)
    for p in points:
        pen.ellipse([p["x"] - radius, p["y"] - radius, p["x"] + radius, p["y"] + radius], outline=(255, 0, 0))
    return canvas


def detect_keypoints(loaded: LoadedModel, image: Image.Image) -> list[dict[str, Any]]:
    """All keypoints in pixel coordinates of ``image``, strongest first."""
    import torch

    inputs = loaded.processor(image, return_tensors="pt")
    with torch.inference_mode():
        outputs = loaded.model(**loaded.to_device(inputs))
    found = loaded.processor.post_process_keypoint_detection(outputs, [(image.height, image.width)])[0]
    rows = [{"x": int(x), "y": int(y), "score": float(s)}
            for (x, y), s in zip(found["keypoints"].tolist(), found["scores"].tolist())]
    return sorted(rows, key=lambda row: row["score"], reverse=True)


def keypoint_detection(loaded: LoadedModel, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_image

    image = open_image(call)
    found = detect_keypoints(loaded, image)
    points = found[: max(1, int(arg(call, "top_k", DEFAULT_TOP_K)))]
    text = f"{len(found)} keypoints found" + (f", the {len(points)} strongest returned" if len(points) < len(found) else "")
    return {"text": text, "image": save_image(draw_keypoints(image, points), call.workspace), "data": points}


HANDLERS = {
    "keypoint-detection": TaskHandler(
        "keypoint-detection", auto_loader("AutoModelForKeypointDetection", "AutoImageProcessor"), keypoint_detection
    ),
}
