"""Image and video generation through diffusers (the optional ``hugginggpt[diffusers]`` extra)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    open_image,
    required,
)

VIDEO_FPS = 8


def _torch_dtype(options: LoadOptions):
    """diffusers takes a real dtype: half precision on GPU, full on CPU (where fp16 is slow or unsupported)."""
    import torch

    if options.dtype not in (None, "auto"):
        return options.dtype
    return torch.float16 if options.device.startswith("cuda") else torch.float32


def diffusers_loader(class_name: str) -> Callable[[Path, LoadOptions], Any]:
    def load(folder: Path, options: LoadOptions) -> Any:
        import diffusers

        pipeline_class = getattr(diffusers, class_name)
        pipe = pipeline_class.from_pretrained(folder, torch_dtype=_torch_dtype(options))
        pipe.set_progress_bar_config(disable=True)
        return pipe.to(options.device)

    return load


def _generator(pipe, call):
    import torch

    seed = arg(call, "seed")
    if seed is None:
        return None
    return torch.Generator(device=pipe.device).manual_seed(int(seed))


def _save_image(image, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_image

    return {"image": save_image(image, call.workspace)}


def text_to_image(pipe, call) -> dict[str, Any]:
    extra = {"negative_prompt": arg(call, "negative_prompt")} if arg(call, "negative_prompt") else {}
    out = pipe(prompt=required(call, "text"), generator=_generator(pipe, call), **extra)
    return _save_image(out.images[0], call)


def image_to_image(pipe, call) -> dict[str, Any]:
    out = pipe(prompt=arg(call, "prompt", ""), image=open_image(call), generator=_generator(pipe, call))
    return _save_image(out.images[0], call)


def unconditional_image_generation(pipe, call) -> dict[str, Any]:
    return _save_image(pipe(generator=_generator(pipe, call)).images[0], call)


def text_to_video(pipe, call) -> dict[str, Any]:
    from hugginggpt.tools.resources import save_video

    frames = pipe(prompt=required(call, "text"), generator=_generator(pipe, call)).frames[0]
    return {"video": save_video(frames, VIDEO_FPS, call.workspace)}


def _handler(class_name: str, infer) -> TaskHandler:
    return TaskHandler(f"diffusers:{class_name}", diffusers_loader(class_name), infer,
                       requires=("diffusers",), extra="diffusers")


HANDLERS = {
    "text-to-image": _handler("AutoPipelineForText2Image", text_to_image),
    "image-to-image": _handler("AutoPipelineForImage2Image", image_to_image),
    "unconditional-image-generation": _handler("DiffusionPipeline", unconditional_image_generation),
    "text-to-video": _handler("DiffusionPipeline", text_to_video),
}
