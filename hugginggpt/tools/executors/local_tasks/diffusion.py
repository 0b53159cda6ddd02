"""Image and video generation through diffusers (the optional ``hugginggpt[diffusers]`` extra).

A pipeline folder (``model_index.json``) is loaded once per task family through diffusers'
auto-pipelines, falling back to the folder's own pipeline class, and checked to take the inputs the
task gives it (a text-to-image task on an unconditional DDPM folder is a load error, not an image
that silently ignores the prompt). Generation runs under a per-pipeline lock: schedulers keep state
between steps, so two concurrent calls on one pipeline would corrupt each other.
"""

from __future__ import annotations

import inspect
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggpt import config
from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    open_image,
    required,
    task_name,
)

VIDEO_FPS = 8
#: Denoising steps when neither the call nor ``HUGGINGGPT_DIFFUSION_STEPS`` says: fine for most
#: checkpoints, and half the usual 50 so that CPU runs finish.
DEFAULT_STEPS = int(config.default("diffusion_steps"))
STEPS_ENV = config.var("diffusion_steps")


class NotAPipelineError(ValueError):
    """A folder that is not a diffusers pipeline, or a pipeline that does not fit the task."""


@dataclass
class LoadedPipeline:
    """A diffusers pipeline, the parameters its ``__call__`` names (with defaults), and its generation lock.

    Only named parameters count: many pipelines also take ``**kwargs`` (for deprecated callbacks),
    which says nothing about what they use.
    """

    pipe: Any
    defaults: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def wrap(cls, pipe: Any) -> LoadedPipeline:
        parameters = inspect.signature(pipe.__call__).parameters.values()
        return cls(pipe, {p.name: None if p.default is inspect.Parameter.empty else p.default
                          for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD})

    def takes(self, name: str) -> bool:
        return name in self.defaults

    def default(self, name: str) -> Any:
        """The default value of a ``__call__`` parameter (None when it has none)."""
        return self.defaults.get(name)


# ---------------------------------------------------------------------------------------- loading


def _torch_dtype(options: LoadOptions):
    """diffusers takes a real dtype: half precision on GPU, full on CPU (where fp16 is slow or unsupported)."""
    import torch

    if isinstance(options.dtype, str) and options.dtype != "auto":
        return getattr(torch, options.dtype)
    if options.dtype not in (None, "auto"):
        return options.dtype
    return torch.float16 if options.device.startswith("cuda") else torch.float32


def _from_folder(class_name: str, folder: Path, options: LoadOptions) -> Any:
    import diffusers

    pipeline_class = getattr(diffusers, class_name)
    return pipeline_class.from_pretrained(folder, dtype=_torch_dtype(options), local_files_only=True)


def diffusers_loader(auto_class: str | None, *, needs: tuple[str, ...] = (),
                     unconditional: bool = False) -> Callable[[Path, LoadOptions], LoadedPipeline]:
    """A loader through ``auto_class`` (else the folder's own class) that checks the pipeline takes ``needs``.

    ``unconditional`` pipelines must not take a prompt (a text-to-image folder would need one).
    """

    def load(folder: Path, options: LoadOptions) -> LoadedPipeline:
        if not (folder / "model_index.json").is_file():
            raise NotAPipelineError("not a diffusers pipeline folder (no model_index.json)")
        pipe = None
        if auto_class is not None:
            try:
                pipe = _from_folder(auto_class, folder, options)
            except ValueError as exc:  # an AutoPipeline with no mapping for this pipeline class
                if "AutoPipeline" not in str(exc):
                    raise
        if pipe is None:
            pipe = _from_folder("DiffusionPipeline", folder, options)
        loaded = LoadedPipeline.wrap(pipe)
        _check_inputs(loaded, needs, unconditional)
        pipe.set_progress_bar_config(disable=True)
        pipe.to(options.device)
        return loaded

    load.__name__ = f"load_{(auto_class or 'DiffusionPipeline')}"
    return load


def _check_inputs(loaded: LoadedPipeline, needs: tuple[str, ...], unconditional: bool) -> None:
    kind = type(loaded.pipe).__name__
    missing = [name for name in needs if not loaded.takes(name)]
    if missing:
        raise NotAPipelineError(f"{kind} does not take {' or '.join(missing)}: not a pipeline for this task")
    if unconditional and loaded.takes("prompt"):
        raise NotAPipelineError(f"{kind} is a text-conditioned pipeline, not an unconditional one")


# ---------------------------------------------------------------------------------------- running


def inference_steps(call) -> int:
    """Denoising steps: the call's ``num_inference_steps``, else ``$HUGGINGGPT_DIFFUSION_STEPS``, else 25."""
    value, source = arg(call, "num_inference_steps"), "num_inference_steps"
    if value is None and config.env("diffusion_steps"):
        value, source = config.env("diffusion_steps"), STEPS_ENV
    if value is None:
        return DEFAULT_STEPS
    steps = _positive_int(value)
    if steps is None:
        raise TaskError(task_name(call), f"{source} must be a positive integer, got {value!r}")
    return steps


def _positive_int(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= 1 else None


def _generator(call):
    """A seeded CPU generator (reproducible on any device), or None for a random image."""
    import torch

    seed = arg(call, "seed")
    if seed is None:
        return None
    try:
        return torch.Generator(device="cpu").manual_seed(int(seed))
    except (TypeError, ValueError, RuntimeError):
        raise TaskError(task_name(call), f"seed must be an integer, got {seed!r}") from None


def generate(loaded: LoadedPipeline, call, **inputs: Any) -> Any:
    """Run the pipeline on the inputs it takes (None ones left out), with steps and seed."""
    kwargs = {name: value for name, value in inputs.items() if value is not None and loaded.takes(name)}
    if loaded.takes("num_inference_steps"):
        kwargs["num_inference_steps"] = steps = inference_steps(call)
        _check_denoising_left(loaded, steps, call)
    generator = _generator(call)
    if generator is not None and loaded.takes("generator"):
        kwargs["generator"] = generator
    with loaded.lock:
        return loaded.pipe(**kwargs)


def _check_denoising_left(loaded: LoadedPipeline, steps: int, call) -> None:
    """Image-to-image runs only ``int(steps * strength)`` steps: zero fails deep inside diffusers."""
    strength = loaded.default("strength")
    if isinstance(strength, (int, float)) and 0 < strength <= 1 and int(steps * strength) < 1:
        raise TaskError(task_name(call), f"{steps} denoising step(s) at strength {strength} leave none to run; "
                                         f"use at least {math.ceil(1 / strength)}")


def _image_result(output, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_image

    images = getattr(output, "images", None)
    if images is None or len(images) == 0:
        raise TaskError(task_name(call), "the pipeline generated no image (is it an image pipeline?)")
    return {"image": save_image(images[0], call.workspace)}


def _video_result(output, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_video

    frames = getattr(output, "frames", None)
    if frames is None or len(frames) == 0:
        raise TaskError(task_name(call), "the pipeline generated no video frames (is it a video pipeline?)")
    return {"video": save_video(frames[0], VIDEO_FPS, call.workspace)}


def text_to_image(loaded: LoadedPipeline, call) -> dict[str, Any]:
    output = generate(loaded, call, prompt=required(call, "text"), negative_prompt=arg(call, "negative_prompt"))
    return _image_result(output, call)


def image_to_image(loaded: LoadedPipeline, call) -> dict[str, Any]:
    image = open_image(call)
    output = generate(loaded, call, image=image, prompt=arg(call, "prompt", ""))
    return _image_result(output, call)


def image_text_to_image(loaded: LoadedPipeline, call) -> dict[str, Any]:
    if not loaded.takes("prompt"):
        raise TaskError(task_name(call), f"{type(loaded.pipe).__name__} takes no text instruction")
    image = open_image(call)
    output = generate(loaded, call, image=image, prompt=required(call, "prompt"))
    return _image_result(output, call)


def unconditional_image_generation(loaded: LoadedPipeline, call) -> dict[str, Any]:
    return _image_result(generate(loaded, call), call)


def text_to_video(loaded: LoadedPipeline, call) -> dict[str, Any]:
    return _video_result(generate(loaded, call, prompt=required(call, "text")), call)


def image_to_video(loaded: LoadedPipeline, call) -> dict[str, Any]:
    image = open_image(call)
    return _video_result(generate(loaded, call, image=image, prompt=arg(call, "prompt")), call)


def _handler(key: str, load: Callable[[Path, LoadOptions], LoadedPipeline], infer) -> TaskHandler:
    return TaskHandler(f"diffusers:{key}", load, infer, requires=("diffusers",), extra="diffusers")


_image_editing = diffusers_loader("AutoPipelineForImage2Image", needs=("image",))

HANDLERS = {
    "text-to-image": _handler("text-to-image", diffusers_loader("AutoPipelineForText2Image", needs=("prompt",)),
                              text_to_image),
    # One loaded pipeline per folder serves both image editing tasks.
    "image-to-image": _handler("image-to-image", _image_editing, image_to_image),
    "image-text-to-image": _handler("image-to-image", _image_editing, image_text_to_image),
    "unconditional-image-generation": _handler("unconditional", diffusers_loader(None, unconditional=True),
                                               unconditional_image_generation),
    "text-to-video": _handler("text-to-video", diffusers_loader(None, needs=("prompt",)), text_to_video),
    "image-to-video": _handler("image-to-video", diffusers_loader(None, needs=("image",)), image_to_video),
}
