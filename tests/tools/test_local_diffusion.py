"""Image and video generation with real (tiny) diffusers pipelines: files, sizes, seeds, steps, errors."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("diffusers")

from PIL import Image

from hugginggpt.errors import ModelLoadError, TaskError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.executors.local_tasks import handler_for
from hugginggpt.tools.executors.local_tasks.diffusion import DEFAULT_STEPS, STEPS_ENV
from hugginggpt.tools.executors.local_tasks.folder_task import folder_task
from hugginggpt.tools.factory import build_tools
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import get_task
from tests.tiny_diffusion import IMAGE_SIZE, tiny_pipeline_path

TASKS = ["text-to-image", "image-to-image", "image-text-to-image", "unconditional-image-generation",
         "text-to-video", "image-to-video"]


@pytest.fixture(scope="module")
def executor(device) -> LocalExecutor:
    """One executor for the module, so each tiny pipeline loads once."""
    return LocalExecutor(device=device)


@pytest.fixture(autouse=True)
def two_steps(monkeypatch):
    monkeypatch.setenv(STEPS_ENV, "2")


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    (tmp_path / "inputs").mkdir()
    return Workspace(root=tmp_path / "run", inputs=[tmp_path / "inputs"])


def input_image(tmp_path: Path, size: tuple[int, int]) -> Path:
    path = tmp_path / "inputs" / "photo.png"
    Image.new("RGB", size, (200, 30, 30)).save(path)
    return path


def run(executor: LocalExecutor, task: str, folder: Path, workspace: Workspace, **args) -> dict:
    return executor.run(TaskCall(task=get_task(task), args=args, workspace=workspace, model=str(folder)))


def generated_image(result: dict, workspace: Workspace) -> Image.Image:
    path = Path(result["image"])
    assert path.is_absolute() and workspace.root.resolve() in path.parents
    image = Image.open(path)
    assert image.format == "PNG"
    return image


# ---------------------------------------------------------------------------- generation


def test_text_to_image_writes_a_png_of_the_pipeline_size(executor, workspace):
    result = run(executor, "text-to-image", tiny_pipeline_path("text-to-image"), workspace,
                 text="a red cat", negative_prompt="blur")
    assert generated_image(result, workspace).size == (IMAGE_SIZE, IMAGE_SIZE)


def test_the_step_count_reaches_the_scheduler(executor, workspace, monkeypatch):
    folder = tiny_pipeline_path("unconditional-image-generation")
    monkeypatch.setenv(STEPS_ENV, "3")
    run(executor, "unconditional-image-generation", folder, workspace, seed=1)
    assert len(executor.model_for("unconditional-image-generation", str(folder)).pipe.scheduler.timesteps) == 3
    monkeypatch.delenv(STEPS_ENV)
    args = {"seed": 1, "num_inference_steps": 2}  # an argument wins over the default
    run(executor, "unconditional-image-generation", folder, workspace, **args)
    assert len(executor.model_for("unconditional-image-generation", str(folder)).pipe.scheduler.timesteps) == 2
    assert DEFAULT_STEPS == 25


def test_a_seed_makes_generation_reproducible(executor, workspace):
    folder = tiny_pipeline_path("unconditional-image-generation")
    first, again, other = (generated_image(run(executor, "unconditional-image-generation", folder, workspace,
                                               seed=seed), workspace).tobytes() for seed in (7, 7, 8))
    assert first == again
    assert first != other


def test_image_to_image_keeps_the_input_size(executor, workspace, tmp_path):
    source = input_image(tmp_path, (40, 24))
    result = run(executor, "image-to-image", tiny_pipeline_path("image-to-image"), workspace,
                 image=source, prompt="make it blue")
    assert generated_image(result, workspace).size == (40, 24)


def test_both_image_editing_tasks_share_one_loaded_pipeline(executor, workspace, tmp_path):
    folder = tiny_pipeline_path("image-to-image")
    source = input_image(tmp_path, (IMAGE_SIZE, IMAGE_SIZE))
    run(executor, "image-to-image", folder, workspace, image=source)
    loads = executor.load_count
    result = run(executor, "image-text-to-image", folder, workspace, image=source, prompt="a sunset sky")
    assert executor.load_count == loads
    assert generated_image(result, workspace).size == (IMAGE_SIZE, IMAGE_SIZE)


def test_text_to_video_writes_an_animated_gif_of_all_frames(executor, workspace, monkeypatch):
    monkeypatch.setenv(STEPS_ENV, "1")
    folder = tiny_pipeline_path("text-to-video")
    result = run(executor, "text-to-video", folder, workspace, text="a cat running")
    video = Image.open(result["video"])
    assert video.format == "GIF" and video.size == (IMAGE_SIZE, IMAGE_SIZE)
    assert video.n_frames == executor.model_for("text-to-video", str(folder)).default("num_frames")


def test_concurrent_calls_on_one_pipeline_match_sequential_ones(executor, workspace):
    """The scheduler keeps per-run state (its timesteps): calls on one pipeline must not interleave."""
    folder = tiny_pipeline_path("unconditional-image-generation")

    def image(steps: int) -> bytes:
        result = run(executor, "unconditional-image-generation", folder, workspace, seed=3, num_inference_steps=steps)
        return Image.open(result["image"]).tobytes()

    sequential = [image(steps) for steps in (2, 5)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        concurrent = list(pool.map(image, (2, 5)))
    assert concurrent == sequential


# ---------------------------------------------------------------------------- through the tools


def test_tools_generate_images_with_a_configured_model(executor, workspace, tmp_path):
    tools = {tool.name: tool for tool in build_tools(
        ["text-to-image", "image-text-to-image", "unconditional-image-generation"], executor=executor)}
    text_folder = str(tiny_pipeline_path("text-to-image"))
    assert tools["text-to-image"].can_run(text_folder)

    def config(folder):
        return {"configurable": {"hf_model": str(folder), "workspace": workspace}}

    made = tools["text-to-image"].invoke({"text": "a blue house"}, config=config(text_folder))
    assert generated_image(made, workspace).size == (IMAGE_SIZE, IMAGE_SIZE)
    source = input_image(tmp_path, (IMAGE_SIZE, IMAGE_SIZE))
    edited = tools["image-text-to-image"].invoke({"image": str(source), "prompt": "at night"},
                                                 config=config(tiny_pipeline_path("image-to-image")))
    assert generated_image(edited, workspace).size == (IMAGE_SIZE, IMAGE_SIZE)
    seeded = [tools["unconditional-image-generation"].invoke(
        {"seed": 5}, config=config(tiny_pipeline_path("unconditional-image-generation"))) for _ in range(2)]
    assert seeded[0]["image"] != seeded[1]["image"]  # two files ...
    assert Image.open(seeded[0]["image"]).tobytes() == Image.open(seeded[1]["image"]).tobytes()  # ... one image


def test_every_generation_task_can_run_now_that_diffusers_is_installed(executor):
    folder = str(tiny_pipeline_path("text-to-image"))
    for task in TASKS:
        assert handler_for(task).missing_requirement() is None
        assert executor.can_run(task, folder), task


# ---------------------------------------------------------------------------- errors


def test_a_folder_that_is_not_a_pipeline_is_a_load_error(executor, workspace, tmp_path):
    folder = tmp_path / "transformers-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(ModelLoadError, match=r"^text-to-image: .*not a diffusers pipeline folder"):
        run(executor, "text-to-image", folder, workspace, text="a cat")


@pytest.mark.parametrize(("task", "kind", "cause"), [
    ("text-to-image", "unconditional-image-generation", "DDPMPipeline does not take prompt"),
    ("unconditional-image-generation", "text-to-image", "text-conditioned pipeline"),
    ("image-to-video", "text-to-image", "does not take image"),
])
def test_a_pipeline_of_another_task_is_a_load_error(executor, workspace, task, kind, cause):
    with pytest.raises(ModelLoadError, match=cause) as caught:
        run(executor, task, tiny_pipeline_path(kind), workspace, text="a cat", seed=1)
    assert caught.value.task == task


def test_text_to_video_on_an_image_pipeline_is_a_task_error(executor, workspace):
    with pytest.raises(TaskError, match="generated no video frames") as caught:
        run(executor, "text-to-video", tiny_pipeline_path("text-to-image"), workspace, text="a cat")
    assert not isinstance(caught.value, ModelLoadError)


@pytest.mark.parametrize("steps", ["0", "many", "2.5"])
def test_a_bad_step_count_is_a_task_error(executor, workspace, monkeypatch, steps):
    monkeypatch.setenv(STEPS_ENV, steps)
    with pytest.raises(TaskError, match=rf"{STEPS_ENV} must be a positive integer"):
        run(executor, "unconditional-image-generation", tiny_pipeline_path("unconditional-image-generation"),
            workspace)


def test_an_inference_failure_is_a_task_error_naming_the_task(executor, workspace, tmp_path):
    with pytest.raises(TaskError, match=r"^image-to-image: inference failed: ValueError: height and width"):
        run(executor, "image-to-image", tiny_pipeline_path("image-to-image"), workspace,
            image=input_image(tmp_path, (1, 1)))  # smaller than one latent pixel


def test_too_few_steps_for_the_image_strength_is_named(executor, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv(STEPS_ENV, "1")  # img2img runs int(1 * strength 0.8) = 0 steps
    with pytest.raises(TaskError, match=r"1 denoising step\(s\) at strength 0.8 leave none to run; use at least 2"):
        run(executor, "image-to-image", tiny_pipeline_path("image-to-image"), workspace,
            image=input_image(tmp_path, (IMAGE_SIZE, IMAGE_SIZE)))


def test_image_editing_needs_its_instruction(executor, workspace, tmp_path):
    with pytest.raises(TaskError, match="missing required argument 'prompt'"):
        run(executor, "image-text-to-image", tiny_pipeline_path("image-to-image"), workspace,
            image=input_image(tmp_path, (IMAGE_SIZE, IMAGE_SIZE)))


# ---------------------------------------------------------------------------- folder -> task


@pytest.mark.parametrize("task", ["text-to-image", "image-to-image", "unconditional-image-generation"])
def test_saved_pipelines_are_recognised_by_their_task(task):
    assert folder_task(tiny_pipeline_path(task)) == task


@pytest.mark.parametrize(("index", "task"), [
    ({"_class_name": "StableVideoDiffusionPipeline", "image_encoder": ["transformers", "CLIPVisionModel"],
      "unet": ["diffusers", "UNetSpatioTemporalConditionModel"]}, "image-to-video"),
    ({"_class_name": "WanPipeline", "text_encoder": ["transformers", "UMT5EncoderModel"],
      "vae": ["diffusers", "AutoencoderKLWan"]}, "text-to-video"),
    ({"_class_name": "WanImageToVideoPipeline", "text_encoder": ["transformers", "UMT5EncoderModel"]},
     "image-to-video"),
    ({"_class_name": "AnimateDiffPipeline", "motion_adapter": ["diffusers", "MotionAdapter"],
      "text_encoder": ["transformers", "CLIPTextModel"]}, "text-to-video"),
    ({"_class_name": "StableDiffusionInstructPix2PixPipeline", "text_encoder": ["transformers", "CLIPTextModel"]},
     "image-text-to-image"),
    ({"_class_name": "QwenImageEditPipeline", "text_encoder": ["transformers", "Qwen2_5_VLModel"]},
     "image-text-to-image"),
    ({"_class_name": "StableDiffusionXLImg2ImgPipeline", "text_encoder_2": ["transformers", "CLIPTextModel"]},
     "image-to-image"),
    ({"_class_name": "FluxPipeline", "text_encoder": ["transformers", "CLIPTextModel"],
      "transformer": ["diffusers", "FluxTransformer2DModel"]}, "text-to-image"),
    ({"_class_name": "DDIMPipeline", "unet": ["diffusers", "UNet2DModel"]}, "unconditional-image-generation"),
])
def test_pipeline_indexes_map_to_tasks(tmp_path, index, task):
    (tmp_path / "model_index.json").write_text(json.dumps(index))
    assert folder_task(tmp_path) == task


def test_a_readme_tag_wins_over_the_pipeline_class(tmp_path):
    folder = tmp_path / "tagged"
    shutil.copytree(tiny_pipeline_path("text-to-image"), folder)
    (folder / "README.md").write_text("---\npipeline_tag: image-to-image\n---\n")
    assert folder_task(folder) == "image-to-image"


def test_an_index_without_a_pipeline_class_is_no_task(tmp_path):
    (tmp_path / "model_index.json").write_text(json.dumps(["not", "an", "index"]))
    assert folder_task(tmp_path) is None
