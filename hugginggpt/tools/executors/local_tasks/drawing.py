"""Render detections and masks onto the input image, so the user can see what a model found."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

PALETTE = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180),
           (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212)]


def draw_boxes(image: Image.Image, detections: list[dict[str, Any]]) -> Image.Image:
    """A copy of ``image`` with each ``{"label", "score", "box": {xmin, ymin, xmax, ymax}}`` drawn."""
    canvas = image.convert("RGB").copy()
    pen = ImageDraw.Draw(canvas)
    for i, det in enumerate(detections):
        box = det["box"]
        color = PALETTE[i % len(PALETTE)]
        xy = [box["xmin"], box["ymin"], max(box["xmin"], box["xmax"]), max(box["ymin"], box["ymax"])]
        pen.rectangle(xy, outline=color, width=max(1, min(canvas.size) // 200))
        pen.text((box["xmin"] + 2, box["ymin"] + 2), f"{det['label']} {det['score']:.2f}", fill=color)
    return canvas


def overlay_masks(image: Image.Image, masks: list[Image.Image], alpha: float = 0.5) -> Image.Image:
    """A copy of ``image`` with each mask (mode "L" or "1", same size) tinted in its own colour."""
    canvas = image.convert("RGB").copy()
    for i, mask in enumerate(masks):
        mask = mask.convert("L")
        if mask.size != canvas.size:
            mask = mask.resize(canvas.size)
        tint = Image.new("RGB", canvas.size, PALETTE[i % len(PALETTE)])
        canvas = Image.composite(Image.blend(canvas, tint, alpha), canvas, mask)
    return canvas
