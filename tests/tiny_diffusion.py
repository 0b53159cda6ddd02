"""Tiny random-weight diffusers pipelines saved with ``save_pretrained``, for real offline generation.

Each builder writes a complete pipeline folder (``model_index.json`` plus one sub-folder per
component) that ``diffusers`` loads exactly like a Hub checkpoint. Images are noise; sizes are real.

    from tests.tiny_diffusion import tiny_pipeline_path

    folder = tiny_pipeline_path("text-to-image")   # built once per process, removed at exit

``PIPELINE_TASKS`` lists what can be built (tasks, plus ``controlnet`` and ``controlnet-pipeline``); ``IMAGE_SIZE`` is the side of the square images they generate.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from pathlib import Path

from tests.tiny_models import FolderCache

LATENT_SIZE = 16
VAE_SCALE = 2  # two VAE blocks: one 2x down/up-sampling
IMAGE_SIZE = LATENT_SIZE * VAE_SCALE
TEXT_DIM = 32


def _clip_tokenizer():
    """A real CLIP BPE tokenizer over letters only (no merges): every word becomes its characters."""
    from transformers import CLIPTokenizer

    specials = ["<|startoftext|>", "<|endoftext|>"]
    letters = list(string.ascii_lowercase)
    vocab = {token: i for i, token in enumerate(specials + letters + [c + "</w>" for c in letters])}
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=16)


def _text_encoder(tokenizer):
    from transformers import CLIPTextConfig, CLIPTextModel

    config = CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=TEXT_DIM, intermediate_size=37, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=tokenizer.model_max_length,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return CLIPTextModel(config).eval()


def _vae():
    from diffusers import AutoencoderKL

    return AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 16), layers_per_block=1,
        norm_num_groups=4, sample_size=IMAGE_SIZE,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
    )


def _ddim_scheduler():
    from diffusers import DDIMScheduler

    return DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                         clip_sample=False, set_alpha_to_one=False, steps_offset=1)


# The sizes every text-conditioned UNet here shares: latents of the VAE, cross-attention on the text encoder.
CONDITIONAL_UNET_SIZES = {
    "sample_size": LATENT_SIZE, "in_channels": 4, "out_channels": 4, "layers_per_block": 1,
    "block_out_channels": (8, 16), "norm_num_groups": 4, "cross_attention_dim": TEXT_DIM, "attention_head_dim": 4,
}


def _stable_diffusion_parts() -> dict:
    from diffusers import UNet2DConditionModel

    tokenizer = _clip_tokenizer()
    unet = UNet2DConditionModel(
        **CONDITIONAL_UNET_SIZES,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
    )
    return {"vae": _vae(), "text_encoder": _text_encoder(tokenizer), "tokenizer": tokenizer, "unet": unet,
            "scheduler": _ddim_scheduler(), "safety_checker": None, "feature_extractor": None,
            "requires_safety_checker": False}


def _save(pipe, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pipe.save_pretrained(folder, safe_serialization=True)
    return folder


def _text_to_image(folder: Path) -> Path:
    from diffusers import StableDiffusionPipeline

    return _save(StableDiffusionPipeline(**_stable_diffusion_parts()), folder)


def _image_to_image(folder: Path) -> Path:
    from diffusers import StableDiffusionImg2ImgPipeline

    return _save(StableDiffusionImg2ImgPipeline(**_stable_diffusion_parts()), folder)


def _unconditional(folder: Path) -> Path:
    from diffusers import DDPMPipeline, DDPMScheduler, UNet2DModel

    unet = UNet2DModel(
        sample_size=IMAGE_SIZE, in_channels=3, out_channels=3, layers_per_block=1,
        block_out_channels=(8, 16), norm_num_groups=4,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
    )
    return _save(DDPMPipeline(unet=unet, scheduler=DDPMScheduler(num_train_timesteps=100)), folder)


def _text_to_video(folder: Path) -> Path:
    from diffusers import TextToVideoSDPipeline, UNet3DConditionModel

    parts = _stable_diffusion_parts()
    unet = UNet3DConditionModel(
        **CONDITIONAL_UNET_SIZES,
        down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"),
        up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
    )
    return _save(TextToVideoSDPipeline(vae=parts["vae"], text_encoder=parts["text_encoder"],
                                       tokenizer=parts["tokenizer"], unet=unet, scheduler=parts["scheduler"]),
                 folder)


def _tiny_controlnet():
    """A ControlNet beside the tiny UNet: same blocks, a condition embedding that halves the map to latents."""
    from diffusers import ControlNetModel

    import torch

    sizes = {key: value for key, value in CONDITIONAL_UNET_SIZES.items() if key not in ("sample_size", "out_channels")}
    controlnet = ControlNetModel(
        **sizes, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        conditioning_embedding_out_channels=(8, 16),
    )
    # A new ControlNet's "zero convolutions" start at zero, so the map would change nothing: give them weights.
    zero_convs = [*controlnet.controlnet_down_blocks, controlnet.controlnet_mid_block,
                  controlnet.controlnet_cond_embedding.conv_out]
    with torch.no_grad():
        for conv in zero_convs:
            conv.weight.normal_(std=0.3)
    return controlnet


def _controlnet_pipeline(folder: Path) -> Path:
    """A whole StableDiffusionControlNetPipeline folder (model_index.json with a controlnet component)."""
    from diffusers import StableDiffusionControlNetPipeline

    return _save(StableDiffusionControlNetPipeline(**_stable_diffusion_parts(), controlnet=_tiny_controlnet()),
                 folder)


def _controlnet_model(folder: Path) -> Path:
    """A ControlNet alone, as the Hub ships lllyasviel/sd-controlnet-*: config.json + weights, no base."""
    folder.mkdir(parents=True, exist_ok=True)
    _tiny_controlnet().save_pretrained(folder, safe_serialization=True)
    return folder


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "text-to-image": _text_to_image,
    "image-to-image": _image_to_image,
    "unconditional-image-generation": _unconditional,
    "text-to-video": _text_to_video,
    "controlnet-pipeline": _controlnet_pipeline,
    "controlnet": _controlnet_model,
}
PIPELINE_TASKS = sorted(BUILDERS)


def build_tiny_pipeline(task: str, folder: str | Path) -> Path:
    """Build the tiny pipeline for ``task`` into ``folder`` (created) and return the folder."""
    if task not in BUILDERS:
        raise KeyError(f"no tiny pipeline for task {task!r}; known: {', '.join(PIPELINE_TASKS)}")
    import torch

    torch.manual_seed(0)  # the same random weights every session
    return BUILDERS[task](Path(folder))


_pipelines = FolderCache("hugginggpt-tiny-pipelines-", build_tiny_pipeline)


def tiny_pipeline_path(task: str) -> Path:
    """The tiny pipeline folder for ``task``, built once per process in a temporary folder."""
    return _pipelines.path(task)
