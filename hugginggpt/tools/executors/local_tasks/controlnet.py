"""JARVIS's ControlNet family: condition maps from images, and new images from a condition map and a text.

``<cond>-control`` turns an image into a condition map: Canny edges with OpenCV (no weights), normal
maps from the depth-estimation model's depth (as sd-controlnet-normal was trained), HED, M-LSD and
OpenPose maps with the ``controlnet_aux`` annotators (``lllyasviel/Annotators`` weights), OpenPose
skeletons also from a VitPose human-pose model (transformers). Depth and segmentation maps come from
the table's own depth-estimation and image-segmentation tasks.

``<cond>-text-to-image`` runs diffusers' ``StableDiffusionControlNetPipeline`` (the SDXL one for SDXL
ControlNets) on a model folder that is either a whole ControlNet pipeline (``model_index.json`` with a
``controlnet`` component) or a ControlNet alone, as the Hub ships ``lllyasviel/sd-controlnet-*``, put
on its base pipeline: ``$HUGGINGGPT_CONTROLNET_BASE``, else the README's ``base_model``, else Stable
Diffusion 1.5 (XL for SDXL ControlNets), from a local folder or the Hugging Face cache.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt import config
from hugginggpt.errors import ModelLoadError, TaskError, error_line
from hugginggpt.paths import expand_home
from hugginggpt.tools.executors.hub_snapshots import cached_snapshot, download_snapshot, is_hub_id
from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    open_image,
    required,
    task_name,
)
from hugginggpt.tools.executors.local_tasks.diffusion import (
    LoadedPipeline,
    NotAPipelineError,
    _image_result,
    _torch_dtype,
    generate,
)
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_loader

BASE_ENV = config.var("controlnet_base")
#: Stable Diffusion 1.5 under its current id, then the id the ControlNet cards still name (since deleted).
SD15_BASES = ("stable-diffusion-v1-5/stable-diffusion-v1-5", "runwayml/stable-diffusion-v1-5")
SDXL_BASES = ("stabilityai/stable-diffusion-xl-base-1.0",)
CANNY_THRESHOLDS = (100, 200)  # JARVIS's and controlnet_aux's defaults
ANNOTATOR_RESOLUTION = 512


@dataclass(frozen=True)
class Condition:
    """One kind of condition map: what it is, which task makes it, and how to tell it from a photo."""

    name: str
    what: str
    producer: str
    model_words: tuple[str, ...]  # words naming it in ControlNet model ids
    grayscale: bool = False
    dark_background: bool = False


CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition("canny", "Canny edge map", "canny-control", ("canny",), grayscale=True, dark_background=True),
    Condition("depth", "depth map", "depth-estimation", ("depth",), grayscale=True),
    Condition("hed", "HED soft-edge map", "hed-control", ("hed", "softedge"), grayscale=True),
    Condition("mlsd", "M-LSD line map", "mlsd-control", ("mlsd",), grayscale=True, dark_background=True),
    Condition("normal", "normal map", "normal-control", ("normal", "normalbae")),
    Condition("openpose", "OpenPose skeleton", "openpose-control", ("openpose", "pose"), dark_background=True),
    Condition("seg", "segmentation map", "image-segmentation", ("seg", "segmentation")),
)}
#: Conditions ControlNets exist for that no task here makes or takes.
OTHER_CONDITIONS = ("scribble", "lineart", "anime", "inpaint", "ip2p", "shuffle", "tile", "qrcode", "brightness",
                    "sketch", "mediapipe", "face")


def condition(name: str) -> Condition:
    """The condition called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return CONDITIONS[name]
    except KeyError:
        raise ValueError(f"unknown condition {name!r} (known: {', '.join(CONDITIONS)})") from None


def task_condition(task: str) -> Condition:
    """The condition of a ``<cond>-control`` or ``<cond>-text-to-image`` task."""
    for suffix in ("-control", "-text-to-image"):
        if task.endswith(suffix):
            return condition(task.removesuffix(suffix))
    raise ValueError(f"{task!r} is not a ControlNet task (<condition>-control or <condition>-text-to-image)")


CONTROL_TASKS = ("canny-control", "hed-control", "mlsd-control", "normal-control", "openpose-control")
GENERATION_TASKS = tuple(f"{name}-text-to-image" for name in CONDITIONS)


# ------------------------------------------------------------------------------------ checks


def check_condition_image(image: Any, cond: Condition, task: str) -> None:
    """A clear error when ``image`` cannot be a ``cond`` map (typically: the photo instead of its map)."""
    import numpy as np

    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    hint = f"make the map first with {cond.producer} and pass its <resource>"
    if cond.grayscale and float(np.mean(pixels.max(axis=2) - pixels.min(axis=2) > 24)) > 0.05:
        raise TaskError(task, f"argument 'image' is a colour picture, not a {cond.what} (which is grey); {hint}")
    if cond.dark_background and float(np.mean(pixels.max(axis=2) < 48)) < 0.5:
        raise TaskError(task, f"argument 'image' is not a {cond.what} (lines on a mostly black background); {hint}")


def _name_words(model: str) -> set[str]:
    """The words of a model's own name: the last part of a Hub id or of a folder path."""
    name = Path(model).name if expand_home(model).is_dir() else model.rsplit("/", 1)[-1]
    return {word for word in re.split(r"[^a-z0-9]+", name.lower()) if word}


def check_model_condition(model: str | None, cond: Condition, task: str) -> None:
    """A clear error when the model's name says it is a ControlNet for another (or an unknown) condition."""
    if not model:
        return
    words = _name_words(model)
    named = [c.name for c in CONDITIONS.values() if words & set(c.model_words)]
    if named and cond.name not in named:
        raise ModelLoadError(task, f"model {model!r} is a ControlNet for {' or '.join(named)} maps, not "
                                   f"{cond.what}s; pick a {cond.name} ControlNet "
                                   f"(e.g. lllyasviel/sd-controlnet-{cond.name})")
    unknown = sorted(words & set(OTHER_CONDITIONS))
    if unknown and not named:
        raise ModelLoadError(task, f"model {model!r} is a ControlNet for {'/'.join(unknown)} maps, a condition "
                                   f"no task here uses (known: {', '.join(CONDITIONS)})")


def controlnet_folder_task(folder: Path) -> str | None:
    """``<cond>-text-to-image`` for a ControlNet folder (or pipeline) whose name says its condition; "" for a
    ControlNet whose name says none (or several); None for a folder that holds no ControlNet."""
    index = _json(folder / "model_index.json")
    config = _json(folder / "config.json")
    if not ((index is not None and "controlnet" in index) or (config or {}).get("_class_name") == "ControlNetModel"):
        return None
    name = folder.parent.parent.name if folder.parent.name == "snapshots" else folder.name  # an HF cache snapshot
    words = _name_words(name.rsplit("--", 1)[-1])
    named = [c.name for c in CONDITIONS.values() if words & set(c.model_words)]
    return f"{named[0]}-text-to-image" if len(named) == 1 else ""


def _text(call) -> str:
    text = required(call, "text")
    if not isinstance(text, str) or not text.strip():
        raise TaskError(task_name(call), "argument 'text' is empty: say what the new image should show")
    return text


# ------------------------------------------------------------------------------- condition maps


def _save(image, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_image

    return {"image": save_image(image, call.workspace)}


def _load_cv2(folder: Path | None, options: LoadOptions) -> Any:
    import cv2

    return cv2


def canny_control(cv2: Any, call) -> dict[str, Any]:
    """Canny edges of the image: white on black, the image's own size."""
    import numpy as np
    from PIL import Image

    image = open_image(call)
    gray = np.asarray(image.convert("L"))
    edges = cv2.Canny(gray, *CANNY_THRESHOLDS)
    return _save(Image.fromarray(np.stack([edges] * 3, axis=2)), call)


def normal_control(pipe, call) -> dict[str, Any]:
    """A normal map from the depth model's depth, the way sd-controlnet-normal's training maps were made."""
    import cv2
    import numpy as np
    from PIL import Image

    image = open_image(call)
    depth = np.asarray(pipe(image)["predicted_depth"].squeeze().float().cpu().numpy(), dtype=np.float32)
    scaled = depth - depth.min()
    scaled /= max(float(scaled.max()), 1e-6)
    background = scaled < 0.4  # the card's threshold: far away (in inverse depth) counts as flat background
    dx = cv2.Sobel(depth, cv2.CV_32F, 1, 0, ksize=3)
    dy = cv2.Sobel(depth, cv2.CV_32F, 0, 1, ksize=3)
    dx[background] = 0
    dy[background] = 0
    normal = np.stack([dx, dy, np.full_like(dx, np.pi * 2.0)], axis=2)
    normal /= np.sum(normal**2.0, axis=2, keepdims=True) ** 0.5
    pixels = (normal * 127.5 + 127.5).clip(0, 255).astype(np.uint8)
    return _save(Image.fromarray(pixels).resize(image.size, Image.BICUBIC), call)


@dataclass(frozen=True)
class Annotator:
    """A controlnet_aux detector and the weight files it reads from an ``lllyasviel/Annotators`` folder."""

    detector: str
    files: tuple[str, ...]

    def load(self, folder: Path, options: LoadOptions) -> Any:
        missing = [name for name in self.files if not (folder / name).is_file()]
        if missing:
            raise ModelLoadError(None, f"{folder} has no {', '.join(missing)}: the {self.detector} needs the "
                                       "annotator weights of lllyasviel/Annotators (hf download lllyasviel/Annotators "
                                       f"{' '.join(self.files)})")
        import controlnet_aux

        detector = getattr(controlnet_aux, self.detector).from_pretrained(str(folder))
        if hasattr(detector, "to"):
            detector = detector.to(options.device) or detector
        return detector


def annotator_control(detector, call) -> dict[str, Any]:
    if isinstance(detector, LoadedModel):  # a VitPose human-pose model (openpose-control)
        return vitpose_control(detector, call)
    image = open_image(call).convert("RGB")
    mapped = detector(image, detect_resolution=ANNOTATOR_RESOLUTION, image_resolution=ANNOTATOR_RESOLUTION,
                      output_type="pil")
    return _save(mapped.convert("RGB").resize(image.size), call)


_OPENPOSE = Annotator("OpenposeDetector", ("body_pose_model.pth", "hand_pose_model.pth", "facenet.pth"))
_ANNOTATORS = {
    "hed-control": Annotator("HEDdetector", ("ControlNetHED.pth",)),
    "mlsd-control": Annotator("MLSDdetector", ("mlsd_large_512_fp32.pth",)),
}

# OpenPose's 18 body points from COCO's 17 (VitPose's): -1 is the neck, between the shoulders.
_COCO_OF_OPENPOSE = (0, -1, 6, 8, 10, 5, 7, 9, 12, 14, 16, 11, 13, 15, 2, 1, 4, 3)
_OPENPOSE_LIMBS = ((1, 2), (1, 5), (2, 3), (3, 4), (5, 6), (6, 7), (1, 8), (8, 9), (9, 10), (1, 11), (11, 12),
                   (12, 13), (1, 0), (0, 14), (14, 16), (0, 15), (15, 17))
_OPENPOSE_COLORS = ((255, 0, 0), (255, 85, 0), (255, 170, 0), (255, 255, 0), (170, 255, 0), (85, 255, 0), (0, 255, 0),
                    (0, 255, 85), (0, 255, 170), (0, 255, 255), (0, 170, 255), (0, 85, 255), (0, 0, 255),
                    (85, 0, 255), (170, 0, 255), (255, 0, 255), (255, 0, 170), (255, 0, 85))
POSE_THRESHOLD = 0.3  # keypoints scored lower are left out of the skeleton


def load_pose_model(folder: Path, options: LoadOptions) -> Any:
    """openpose-control's model: OpenPose annotator weights (controlnet_aux), or a VitPose human-pose model
    (the keypoint-detection table's pose models: the whole image is taken as one person's box)."""
    if (folder / _OPENPOSE.files[0]).is_file():
        if importlib.util.find_spec("controlnet_aux") is None:
            raise ModelLoadError(None, "the 'controlnet_aux' package is not installed; install hugginggpt[controlnet]")
        return _OPENPOSE.load(folder, options)
    if (_json(folder / "config.json") or {}).get("model_type") == "vitpose":
        return auto_loader("VitPoseForPoseEstimation", "AutoImageProcessor")(folder, options)
    raise ModelLoadError(None, f"{folder} holds neither the OpenPose annotator weights ({', '.join(_OPENPOSE.files)} "
                               "of lllyasviel/Annotators) nor a VitPose human-pose model "
                               "(e.g. usyd-community/vitpose-base-simple)")


def vitpose_control(loaded: LoadedModel, call) -> dict[str, Any]:
    """An OpenPose-style skeleton (OpenPose's colours, on black) of the person VitPose finds in the image."""
    import torch
    from PIL import Image, ImageDraw

    image = open_image(call).convert("RGB")
    boxes = [[[0.0, 0.0, float(image.width), float(image.height)]]]
    inputs = loaded.processor(image, boxes=boxes, return_tensors="pt")
    with torch.inference_mode():
        outputs = loaded.model(**loaded.to_device(inputs))
    person = loaded.processor.post_process_pose_estimation(outputs, boxes=boxes)[0][0]
    coco = [(float(x), float(y), float(score)) for (x, y), score in
            zip(person["keypoints"].tolist(), person["scores"].tolist())]
    if len(coco) != 17:
        raise TaskError(task_name(call), f"the pose model gives {len(coco)} keypoints, not COCO's 17 body points")
    neck = tuple((a + b) / 2 for a, b in zip(coco[5], coco[6]))[:2] + (min(coco[5][2], coco[6][2]),)
    points = [neck if index < 0 else coco[index] for index in _COCO_OF_OPENPOSE]
    canvas = Image.new("RGB", image.size, (0, 0, 0))
    pen = ImageDraw.Draw(canvas)
    width = max(2, min(image.size) // 100)
    for (start, end), color in zip(_OPENPOSE_LIMBS, _OPENPOSE_COLORS):
        (x0, y0, s0), (x1, y1, s1) = points[start], points[end]
        if min(s0, s1) >= POSE_THRESHOLD:
            pen.line([(x0, y0), (x1, y1)], fill=tuple(int(c * 0.6) for c in color), width=width)
    for (x, y, score), color in zip(points, _OPENPOSE_COLORS):
        if score >= POSE_THRESHOLD:
            pen.ellipse([x - width, y - width, x + width, y + width], fill=color)
    return _save(canvas, call)


# ---------------------------------------------------------------------------------- generation


def load_controlnet_pipeline(folder: Path, options: LoadOptions) -> LoadedPipeline:
    """A ControlNet pipeline from a pipeline folder, or from a ControlNet folder and its base pipeline."""
    import diffusers

    dtype = _torch_dtype(options)
    index = _json(folder / "model_index.json")
    if index is not None:
        if "controlnet" not in index:
            raise NotAPipelineError(f"{index.get('_class_name', 'the pipeline')} has no ControlNet: "
                                    "not a pipeline for this task")
        pipe = diffusers.DiffusionPipeline.from_pretrained(folder, dtype=dtype, local_files_only=True)
    else:
        config = _json(folder / "config.json") or {}
        if config.get("_class_name") != "ControlNetModel":
            raise NotAPipelineError("neither a ControlNet (config.json of a ControlNetModel) nor a ControlNet "
                                    "pipeline folder (model_index.json)")
        xl = config.get("addition_embed_type") == "text_time"  # SDXL's size/crop conditioning
        base = base_folder(base_candidates(folder, xl), options)  # first: a missing base fails before any load
        controlnet = diffusers.ControlNetModel.from_pretrained(folder, dtype=dtype, local_files_only=True)
        pipeline_class = diffusers.StableDiffusionXLControlNetPipeline if xl else diffusers.StableDiffusionControlNetPipeline
        pipe = pipeline_class.from_pretrained(base, controlnet=controlnet, dtype=dtype, local_files_only=True)
    loaded = LoadedPipeline.wrap(pipe)
    missing = [name for name in ("prompt", "image") if not loaded.takes(name)]
    if missing or getattr(pipe, "controlnet", None) is None:
        raise NotAPipelineError(f"{type(pipe).__name__} is not a ControlNet pipeline taking a prompt and an image")
    pipe.set_progress_bar_config(disable=True)
    pipe.to(options.device)
    return loaded


def _json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def base_candidates(folder: Path, xl: bool) -> list[str]:
    """Where the base pipeline of the ControlNet in ``folder`` may be, most specific first."""
    base = config.env("controlnet_base")
    if base:
        return [base]
    defaults = list(SDXL_BASES if xl else SD15_BASES)
    named = _readme_base_model(folder)
    if named is None:
        return defaults
    return [named, *(base for base in defaults if named in defaults and base != named)]


def _readme_base_model(folder: Path) -> str | None:
    import yaml

    try:
        text = (folder / "README.md").read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else None
    except (OSError, IndexError, yaml.YAMLError):
        return None
    base = meta.get("base_model") if isinstance(meta, dict) else None
    if isinstance(base, list):
        base = base[0] if base else None
    return str(base) if base else None


def base_folder(candidates: list[str], options: LoadOptions) -> Path:
    """The first candidate on this machine (a folder, or a Hub id in the HF cache); downloaded if allowed."""
    for candidate in candidates:
        folder = expand_home(candidate)
        if folder.is_dir():
            return folder
        snapshot = cached_snapshot(candidate)
        if snapshot is not None:
            return snapshot
    hub_ids = [c for c in candidates if is_hub_id(c)]
    if options.download and hub_ids:
        try:
            return download_snapshot(hub_ids[0])
        except Exception as exc:  # noqa: BLE001 - one line naming what could not be fetched
            raise ModelLoadError(None, f"cannot download the ControlNet's base pipeline {hub_ids[0]}: "
                                       f"{error_line(exc)}") from exc
    raise ModelLoadError(None, f"the ControlNet's base pipeline ({' or '.join(candidates)}) is not on this machine: "
                               f"download it (hf download {candidates[0]}) or set {BASE_ENV} to a local "
                               "Stable Diffusion folder")


def _native_size(image, pipe) -> tuple[int, int]:
    """The image's aspect at the pipeline's trained resolution (long side), in multiples the UNet takes."""
    scale = int(getattr(pipe, "vae_scale_factor", 8))
    native = int(pipe.unet.config.sample_size) * scale
    step = scale * 8
    ratio = native / max(image.size)
    return tuple(max(step, round(side * ratio / step) * step) for side in image.size)


def controlnet_text_to_image(loaded: LoadedPipeline, call) -> dict[str, Any]:
    task = task_name(call)
    cond = task_condition(task)
    check_model_condition(call.model, cond, task)
    text = _text(call)
    image = open_image(call).convert("RGB")
    check_condition_image(image, cond, task)
    control = image.resize(_native_size(image, loaded.pipe))
    return _image_result(generate(loaded, call, prompt=text, image=control), call)


# ------------------------------------------------------------------------------------ handlers


def _generation_handler() -> TaskHandler:
    return TaskHandler("diffusers:controlnet", load_controlnet_pipeline, controlnet_text_to_image,
                       requires=("diffusers",), extra="diffusers")


HANDLERS: dict[str, TaskHandler] = {
    "canny-control": TaskHandler("opencv:canny", _load_cv2, canny_control, requires=("cv2",), weights=False),
    # The depth-estimation model, loaded once for both tasks.
    "normal-control": TaskHandler("depth-estimation", pipeline_loader("depth-estimation"), normal_control,
                                  requires=("cv2",)),
    **{task: TaskHandler(f"controlnet_aux:{annotator.detector}", annotator.load, annotator_control,
                         requires=("controlnet_aux",), extra="controlnet")
       for task, annotator in _ANNOTATORS.items()},
    "openpose-control": TaskHandler("openpose", load_pose_model, annotator_control),
    **{task: _generation_handler() for task in GENERATION_TASKS},
}
