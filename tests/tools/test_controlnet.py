"""JARVIS's ControlNet tasks: the table, the catalog, condition maps, generation on tiny models, routing, errors.

Every test name says "controlnet", so ``pytest -k controlnet`` selects them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

pytest.importorskip("cv2")
pytest.importorskip("diffusers")

from hugginggpt.errors import ModelLoadError, TaskError, UnknownTaskError
from hugginggpt.tools import args_model, build_tools, get_task, task_table
from hugginggpt.tools.catalog import ModelCatalog
from hugginggpt.tools.catalog.catalog import CatalogError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.hybrid import HybridExecutor
from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.executors.local_tasks import handler_for
from hugginggpt.tools.executors.local_tasks.controlnet import (
    BASE_ENV,
    CONTROL_TASKS,
    GENERATION_TASKS,
    Annotator,
    condition,
)
from hugginggpt.tools.executors.local_tasks.diffusion import STEPS_ENV
from hugginggpt.tools.executors.remote import RemoteExecutor
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import hub_tasks
from tests.inference_server import InferenceServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "example.jpg"
JARVIS_NAMES = ["canny-control", "hed-control", "mlsd-control", "normal-control", "openpose-control",
                "canny-text-to-image", "depth-text-to-image", "hed-text-to-image", "mlsd-text-to-image",
                "normal-text-to-image", "openpose-text-to-image", "seg-text-to-image"]


@pytest.fixture(scope="module")
def executor(device) -> LocalExecutor:
    """One executor for the module, so each tiny model loads once."""
    return LocalExecutor(device=device)


@pytest.fixture(autouse=True)
def two_steps(monkeypatch):
    monkeypatch.setenv(STEPS_ENV, "2")
    monkeypatch.delenv(BASE_ENV, raising=False)


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    (tmp_path / "inputs").mkdir()
    return Workspace(root=tmp_path / "run", inputs=[tmp_path / "inputs", EXAMPLE.parent])


def outputs(workspace: Workspace) -> list[Path]:
    return sorted(p for p in workspace.root.rglob("*") if p.is_file()) if workspace.root.exists() else []


def run(executor, task: str, workspace: Workspace, model: str | Path | None = None, **args) -> dict:
    return executor.run(TaskCall(task=get_task(task), args=args, workspace=workspace,
                                 model=None if model is None else str(model)))


# ------------------------------------------------------------------------------- table, catalog


def test_controlnet_tasks_are_in_the_table_under_jarvis_names_not_as_hub_tags():
    table = task_table()
    assert [name for name in table if not table[name].hub_tag] == JARVIS_NAMES
    assert not set(JARVIS_NAMES) & set(hub_tasks())
    assert sorted(CONTROL_TASKS + GENERATION_TASKS) == sorted(JARVIS_NAMES)
    assert all(handler_for(name) is not None for name in JARVIS_NAMES)
    for name in JARVIS_NAMES:
        spec = table[name]
        assert spec.outputs == ["image"] and len(spec.description) < 90  # short: it goes into every planning prompt
        schema = args_model(spec).model_json_schema()
        expected = ["image"] if name.endswith("-control") else ["image", "text"]
        assert sorted(schema["required"]) == expected, name


def test_controlnet_tools_and_plan_schema_are_generated_like_every_other_task():
    from hugginggpt.tools.schemas import plan_json_schema

    tools = {tool.name: tool for tool in build_tools(["canny-control", "canny-text-to-image"])}
    assert set(tools["canny-text-to-image"].args) == {"image", "text"}
    assert "canny-control" in tools["canny-text-to-image"].description
    steps = json.dumps(plan_json_schema([get_task("canny-control"), get_task("canny-text-to-image")]))
    assert '"canny-control"' in steps and '"canny-text-to-image"' in steps


def test_controlnet_catalog_knows_lllyasviel_models_and_never_asks_the_hub_for_them():
    catalog = ModelCatalog(scan_hf_cache=False)
    for cond in ("canny", "depth", "hed", "mlsd", "normal", "openpose", "seg"):
        ids = [card.id for card in catalog.candidates(f"{cond}-text-to-image", k=10)]
        assert f"lllyasviel/sd-controlnet-{cond}" in ids
        assert any(i.startswith("lllyasviel/control_v11") for i in ids)
    assert catalog.candidates("canny-control") == []  # OpenCV: no weights to pick
    assert [c.id for c in catalog.candidates("hed-control")] == ["lllyasviel/Annotators"]

    class Api:
        endpoint = "http://hub.invalid"
        asked: list[str] = []

        def list_models(self, pipeline_tag, **_):
            self.asked.append(pipeline_tag)
            return []

    api = Api()
    catalog.refresh(api=api)
    assert api.asked and not set(api.asked) & set(JARVIS_NAMES)
    with pytest.raises(CatalogError, match="canny-text-to-image is JARVIS's task name, not a Hub pipeline tag"):
        catalog.refresh(["canny-text-to-image"], api=api)


def test_controlnet_names_stay_out_of_the_taskbench_mapping():
    from hugginggpt.eval.mapping import TaskBenchMapping

    mapping = TaskBenchMapping(["Text-to-Image", "Image-to-Image", "Depth Estimation"])
    assert mapping.unmatched() == {}
    assert {mapping.to_task(t) for t in ("Text-to-Image", "Image-to-Image", "Depth Estimation")} == {
        "text-to-image", "image-to-image", "depth-estimation"}


# ------------------------------------------------------------------------------- condition maps


def test_controlnet_canny_control_on_a_real_image_gives_an_edge_map_of_the_same_size(executor, workspace):
    assert executor.can_run("canny-control", None)  # no weights needed
    result = run(executor, "canny-control", workspace, image=EXAMPLE)
    assert "None" not in executor.loaded_models()
    edges = Image.open(result["image"])
    assert edges.size == Image.open(EXAMPLE).size and edges.format == "PNG"
    pixels = np.asarray(edges.convert("RGB"))
    assert set(np.unique(pixels).tolist()) == {0, 255}  # white edges on black
    assert (pixels[..., 0] == pixels[..., 2]).all()
    assert 0.001 < float((pixels[..., 0] == 255).mean()) < 0.3
    photo = np.asarray(Image.open(EXAMPLE).convert("L"), dtype=np.int16)
    strong = np.abs(np.diff(photo, axis=1)) > 60  # the photo's sharpest steps lie on (or next to) edges
    near_edge = np.maximum(pixels[:, 1:, 0], pixels[:, :-1, 0]) == 255
    assert float(near_edge[strong].mean()) > 0.5


def test_controlnet_canny_control_needs_no_model_through_the_hybrid_executor(workspace, device):
    catalog = ModelCatalog(shipped=False, scan_hf_cache=False)
    hybrid = HybridExecutor(LocalExecutor(catalog, device=device), RemoteExecutor(), catalog=catalog)
    assert hybrid.route("canny-control", None)[0].name == "local"
    call = TaskCall(task=get_task("canny-control"), args={"image": EXAMPLE}, workspace=workspace, model=None)
    assert Image.open(hybrid.run(call)["image"]).size == Image.open(EXAMPLE).size


def test_controlnet_normal_control_runs_on_the_depth_estimation_model(executor, workspace, tmp_path):
    from tests.tiny_models import tiny_model_path

    depth_model = tiny_model_path("depth-estimation")
    photo = tmp_path / "inputs" / "photo.png"
    Image.open(EXAMPLE).resize((64, 48)).save(photo)
    run(executor, "depth-estimation", workspace, depth_model, image=photo)
    loads = executor.load_count
    result = run(executor, "normal-control", workspace, depth_model, image=photo)
    assert executor.load_count == loads  # one loaded depth model serves both tasks
    normal = np.asarray(Image.open(result["image"]).convert("RGB"), dtype=float)
    assert normal.shape == (48, 64, 3)
    assert normal[..., 2].mean() > 127  # unit normals point at the viewer: blue is never below the middle


def test_controlnet_annotators_name_what_is_missing(executor, workspace, tmp_path):
    import importlib.util

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelLoadError, match=r"^openpose-control: .* holds neither the OpenPose annotator weights "
                                             r"\(body_pose_model.pth, .*\) nor a VitPose human-pose model"):
        run(executor, "openpose-control", workspace, empty, image=EXAMPLE)
    with pytest.raises(ModelLoadError, match=r"has no ControlNetHED.pth: the HEDdetector needs .*lllyasviel/Annotators"):
        Annotator("HEDdetector", ("ControlNetHED.pth",)).load(empty, executor.options)
    if importlib.util.find_spec("controlnet_aux") is None:
        with pytest.raises(ModelLoadError, match=r"^hed-control: the 'controlnet_aux' package is not installed; "
                                                 r"install hugginggpt\[controlnet\]"):
            run(executor, "hed-control", workspace, empty, image=EXAMPLE)
        assert not executor.can_run("mlsd-control", str(empty))
        annotators = tmp_path / "Annotators"
        annotators.mkdir()
        for name in ("body_pose_model.pth", "hand_pose_model.pth", "facenet.pth"):
            (annotators / name).write_bytes(b"")
        with pytest.raises(ModelLoadError, match=r"^openpose-control: the 'controlnet_aux' package is not installed"):
            run(executor, "openpose-control", workspace, annotators, image=EXAMPLE)
    assert outputs(workspace) == []


@pytest.fixture(scope="module")
def tiny_vitpose(tmp_path_factory) -> Path:
    """A tiny random VitPose (COCO's 17 body points): a keypoint-detection table model for human pose."""
    from transformers import VitPoseBackboneConfig, VitPoseConfig, VitPoseForPoseEstimation, VitPoseImageProcessor

    folder = tmp_path_factory.mktemp("vitpose")
    backbone = VitPoseBackboneConfig(image_size=[32, 24], patch_size=[8, 8], hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, mlp_ratio=2, out_indices=[1])
    names = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
             "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
             "right_knee", "left_ankle", "right_ankle"]
    config = VitPoseConfig(backbone_config=backbone, id2label=dict(enumerate(names)))
    VitPoseForPoseEstimation(config).eval().save_pretrained(folder)
    VitPoseImageProcessor(size={"height": 32, "width": 24}).save_pretrained(folder)
    return folder


def test_controlnet_openpose_control_draws_a_vitpose_skeleton(executor, workspace, tiny_vitpose, monkeypatch):
    from hugginggpt.tools.executors.local_tasks import controlnet

    monkeypatch.setattr(controlnet, "POSE_THRESHOLD", 0.0)  # random weights score low: draw every point
    result = run(executor, "openpose-control", workspace, tiny_vitpose, image=EXAMPLE)
    skeleton = np.asarray(Image.open(result["image"]).convert("RGB"))
    assert skeleton.shape[:2] == Image.open(EXAMPLE).size[::-1]
    drawn = skeleton.max(axis=2) > 0
    assert 0 < float(drawn.mean()) < 0.5  # limbs on black
    colours = {tuple(p) for p in skeleton[drawn].reshape(-1, 3).tolist()}
    assert (255, 0, 0) in colours or (255, 85, 0) in colours  # OpenPose's joint colours
    monkeypatch.setattr(controlnet, "POSE_THRESHOLD", 1.1)  # nobody found: an empty (black) map
    empty = np.asarray(Image.open(run(executor, "openpose-control", workspace, tiny_vitpose, image=EXAMPLE)["image"]))
    assert empty.max() == 0


# ------------------------------------------------------------------------------- generation


def condition_image(cond: str, size=(40, 24)) -> Image.Image:
    """A plausible map of each kind: grey for edges/depth, black with colour for poses, flat colours for seg."""
    w, h = size
    if cond == "depth":
        return Image.fromarray(np.tile(np.linspace(0, 255, w, dtype=np.uint8), (h, 1))).convert("RGB")
    if cond == "normal":
        return Image.new("RGB", size, (128, 128, 255))
    if cond == "seg":
        image = Image.new("RGB", size, (120, 120, 120))
        ImageDraw.Draw(image).rectangle([0, h // 2, w, h], fill=(4, 200, 3))
        return image
    image = Image.new("RGB", size, (0, 0, 0))
    draw = ImageDraw.Draw(image)
    color = (255, 0, 85) if cond == "openpose" else (255, 255, 255)
    draw.line([(2, 2), (w - 3, h - 3)], fill=color, width=2)
    if cond == "hed":
        draw.line([(2, h - 3), (w - 3, 2)], fill=(140, 140, 140), width=3)
    return image


@pytest.mark.parametrize("task", GENERATION_TASKS)
def test_controlnet_text_to_image_runs_end_to_end_on_a_tiny_pipeline(executor, workspace, tmp_path, task):
    from tests.tiny_diffusion import IMAGE_SIZE, tiny_pipeline_path

    cond = task.removesuffix("-text-to-image")
    path = tmp_path / "inputs" / f"{cond}.png"
    condition_image(cond).save(path)
    result = run(executor, task, workspace, tiny_pipeline_path("controlnet-pipeline"), image=path, text="a castle")
    image = Image.open(result["image"])
    assert image.format == "PNG" and max(image.size) == IMAGE_SIZE  # the pipeline's own resolution, long side
    assert image.size[0] > image.size[1]  # the map's landscape aspect is kept


def test_controlnet_every_generation_task_shares_one_loaded_pipeline(executor, workspace, tmp_path):
    from tests.tiny_diffusion import tiny_pipeline_path

    folder = tiny_pipeline_path("controlnet-pipeline")
    paths = {}
    for cond in ("canny", "depth"):
        paths[cond] = tmp_path / "inputs" / f"{cond}.png"
        condition_image(cond).save(paths[cond])
    run(executor, "canny-text-to-image", workspace, folder, image=paths["canny"], text="a castle")
    loads = executor.load_count
    run(executor, "depth-text-to-image", workspace, folder, image=paths["depth"], text="a castle")
    assert executor.load_count == loads


def test_controlnet_seeded_generation_follows_the_condition_map(executor, workspace, tmp_path):
    from tests.tiny_diffusion import tiny_pipeline_path

    folder = tiny_pipeline_path("controlnet-pipeline")
    first, second = tmp_path / "inputs" / "a.png", tmp_path / "inputs" / "b.png"
    condition_image("canny").save(first)
    condition_image("canny").transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(second)

    same = [executor.run(TaskCall(task=get_task("canny-text-to-image"), workspace=workspace, model=str(folder),
                                  args={"image": first, "text": "a castle", "seed": 3})) for _ in range(2)]
    assert np.array_equal(*(np.asarray(Image.open(r["image"])) for r in same))
    other = executor.run(TaskCall(task=get_task("canny-text-to-image"), workspace=workspace, model=str(folder),
                                  args={"image": second, "text": "a castle", "seed": 3}))
    assert not np.array_equal(np.asarray(Image.open(same[0]["image"])), np.asarray(Image.open(other["image"])))


def test_controlnet_alone_runs_on_the_base_pipeline_it_names(executor, workspace, tmp_path, monkeypatch):
    """As the Hub ships lllyasviel/sd-controlnet-*: a ControlNet folder whose README names its base model."""
    import shutil

    from tests.tiny_diffusion import tiny_pipeline_path

    controlnet = tmp_path / "sd-controlnet-canny"
    shutil.copytree(tiny_pipeline_path("controlnet"), controlnet)
    edges = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(edges)
    missing = tmp_path / "no-such-base"
    (controlnet / "README.md").write_text(f"---\nbase_model: {missing}\ntags: [controlnet]\n---\n")
    with pytest.raises(ModelLoadError, match=rf"^canny-text-to-image: the ControlNet's base pipeline \({missing}\) "
                                             rf"is not on this machine: .*set {BASE_ENV}"):
        run(executor, "canny-text-to-image", workspace, controlnet, image=edges, text="a castle")
    assert outputs(workspace) == []

    (controlnet / "README.md").write_text(f"---\nbase_model: {tiny_pipeline_path('text-to-image')}\n---\n")
    result = run(executor, "canny-text-to-image", workspace, controlnet, image=edges, text="a castle")
    assert Image.open(result["image"]).format == "PNG"
    pipe = executor.model_for("canny-text-to-image", str(controlnet)).pipe
    assert type(pipe).__name__ == "StableDiffusionControlNetPipeline"

    other = tmp_path / "control_v11p_sd15_canny"
    shutil.copytree(tiny_pipeline_path("controlnet"), other)  # no README: the environment names the base
    monkeypatch.setenv(BASE_ENV, str(tiny_pipeline_path("text-to-image")))
    assert Image.open(run(executor, "canny-text-to-image", workspace, other, image=edges, text="a castle")["image"])


def test_controlnet_half_precision_reaches_every_component(monkeypatch):
    """On CUDA the executor loads in fp16 (``dtype="auto"``); loading (not running: CPUs lack fp16 kernels) in
    fp16 here checks that the dtype reaches the ControlNet and the base pipeline alike."""
    import torch

    from hugginggpt.tools.executors.local_tasks.common import LoadOptions
    from hugginggpt.tools.executors.local_tasks.controlnet import load_controlnet_pipeline
    from hugginggpt.tools.executors.local_tasks.diffusion import _torch_dtype
    from tests.tiny_diffusion import tiny_pipeline_path

    assert _torch_dtype(LoadOptions(device="cuda")) == torch.float16
    assert _torch_dtype(LoadOptions(device="cpu")) == torch.float32
    monkeypatch.setenv(BASE_ENV, str(tiny_pipeline_path("text-to-image")))
    for folder in (tiny_pipeline_path("controlnet"), tiny_pipeline_path("controlnet-pipeline")):
        pipe = load_controlnet_pipeline(folder, LoadOptions(device="cpu", dtype="float16")).pipe
        assert {pipe.unet.dtype, pipe.controlnet.dtype, pipe.vae.dtype, pipe.text_encoder.dtype} == {torch.float16}


def test_controlnet_for_sdxl_looks_for_the_sdxl_base(executor, workspace, tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # not cached
    controlnet = tmp_path / "controlnet-canny-sdxl-1.0"
    controlnet.mkdir()
    (controlnet / "config.json").write_text(json.dumps({"_class_name": "ControlNetModel",
                                                        "addition_embed_type": "text_time"}))
    edges = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(edges)
    with pytest.raises(ModelLoadError, match=r"base pipeline \(stabilityai/stable-diffusion-xl-base-1.0\) is not on "
                                             r"this machine: download it \(hf download stabilityai/"):
        run(executor, "canny-text-to-image", workspace, controlnet, image=edges, text="a castle")


def test_controlnet_folders_are_registered_under_their_condition(tmp_path):
    import shutil

    from hugginggpt.tools.executors.local_tasks.folder_task import folder_task
    from tests.tiny_diffusion import tiny_pipeline_path

    cache_snapshot = tmp_path / "models--lllyasviel--sd-controlnet-openpose" / "snapshots" / "0123abcd"
    shutil.copytree(tiny_pipeline_path("controlnet"), cache_snapshot)
    shutil.copytree(tiny_pipeline_path("controlnet-pipeline"), tmp_path / "my-depth-controlnet")
    assert folder_task(cache_snapshot) == "openpose-text-to-image"
    assert folder_task(tmp_path / "my-depth-controlnet") == "depth-text-to-image"
    assert folder_task(tiny_pipeline_path("controlnet")) is None  # a ControlNet, but for which condition?
    assert folder_task(tiny_pipeline_path("text-to-image")) == "text-to-image"
    catalog = ModelCatalog(shipped=False, scan_hf_cache=False)
    assert catalog.register_local(cache_snapshot).task == "openpose-text-to-image"


# ------------------------------------------------------------------------------- bad input


def test_controlnet_a_photo_instead_of_its_condition_map_is_named(executor, workspace):
    from tests.tiny_diffusion import tiny_pipeline_path

    folder = tiny_pipeline_path("controlnet-pipeline")
    for task, producer in (("canny-text-to-image", "canny-control"), ("depth-text-to-image", "depth-estimation"),
                           ("openpose-text-to-image", "openpose-control")):
        with pytest.raises(TaskError, match=rf"^{task}: argument 'image' .*not a .*; make the map first with "
                                            rf"{producer}"):
            run(executor, task, workspace, folder, image=EXAMPLE, text="a castle")
    assert outputs(workspace) == []


@pytest.mark.parametrize("text", ["", "   "])
def test_controlnet_an_empty_text_is_named(executor, workspace, tmp_path, text):
    from tests.tiny_diffusion import tiny_pipeline_path

    path = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(path)
    with pytest.raises(TaskError, match=r"^canny-text-to-image: .*'text'"):
        run(executor, "canny-text-to-image", workspace, tiny_pipeline_path("controlnet-pipeline"), image=path, text=text)
    assert outputs(workspace) == []


def test_controlnet_unknown_conditions_are_named(executor, workspace, tmp_path):
    import shutil

    from tests.tiny_diffusion import tiny_pipeline_path

    with pytest.raises(UnknownTaskError, match="scribble-text-to-image"):
        build_tools(["scribble-text-to-image"])
    with pytest.raises(ValueError, match=r"unknown condition 'scribble' \(known: canny, depth, hed"):
        condition("scribble")
    path = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(path)
    for name, cause in (("sd-controlnet-depth", "is a ControlNet for depth maps, not Canny edge maps"),
                        ("control_v11p_sd15_scribble", "is a ControlNet for scribble maps, a condition no task here")):
        folder = tmp_path / name
        shutil.copytree(tiny_pipeline_path("controlnet-pipeline"), folder)
        with pytest.raises(ModelLoadError, match=rf"^canny-text-to-image: model '.*{name}' {cause}"):
            run(executor, "canny-text-to-image", workspace, folder, image=path, text="a castle")
    assert outputs(workspace) == []


def test_controlnet_a_pipeline_without_a_controlnet_is_a_load_error(executor, workspace, tmp_path):
    from tests.tiny_diffusion import tiny_pipeline_path

    path = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(path)
    with pytest.raises(ModelLoadError, match="StableDiffusionPipeline has no ControlNet"):
        run(executor, "canny-text-to-image", workspace, tiny_pipeline_path("text-to-image"), image=path, text="a cat")
    with pytest.raises(ModelLoadError, match="neither a ControlNet"):
        run(executor, "canny-text-to-image", workspace, tmp_path / "inputs", image=path, text="a cat")


def test_controlnet_a_wrong_file_kind_is_a_resource_error(executor, workspace, tmp_path):
    sound = tmp_path / "inputs" / "photo.jpg"
    sound.write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt ")
    with pytest.raises(TaskError, match=r"^canny-control: "):
        run(executor, "canny-control", workspace, image=sound)
    assert outputs(workspace) == []


# ------------------------------------------------------------------------------- remote


def test_controlnet_generation_runs_remotely_on_an_endpoint_that_serves_it(workspace, tmp_path):
    edges = tmp_path / "inputs" / "edges.png"
    condition_image("canny").save(edges)
    assert not RemoteExecutor().can_run("canny-text-to-image", None)  # providers need the ControlNet named
    assert RemoteExecutor().can_run("canny-text-to-image", "lllyasviel/sd-controlnet-canny")
    assert not RemoteExecutor().can_run("canny-control", "lllyasviel/sd-controlnet-canny")  # no such API
    with InferenceServer() as server:
        remote = RemoteExecutor(f"{server.url}/image-to-image", max_retries=0)
        assert remote.can_run("canny-text-to-image", None)
        result = remote.run(TaskCall(task=get_task("canny-text-to-image"), workspace=workspace,
                                     args={"image": edges, "text": "a blue castle"}))
        sent = json.loads(server.requests[-1]["body"])
    image = Image.open(result["image"])
    assert image.size == (40, 24) and image.getpixel((0, 0)) == (20, 20, 220)
    assert sent["parameters"]["prompt"] == "a blue castle"


def test_controlnet_hybrid_runs_locally_what_the_remote_cannot_and_says_why_not(workspace, device):
    catalog = ModelCatalog(shipped=True, scan_hf_cache=False)
    remote_only = HybridExecutor(None, RemoteExecutor(), catalog=catalog, policy="remote")
    with pytest.raises(ModelLoadError, match=r"^canny-control: no model can run it on the remote endpoint "
                                             r"\(execution policy 'remote'\): the Inference API has no canny-control "
                                             r"task \(it runs only on this machine\)$"):
        remote_only.route("canny-control", None)
    hybrid = HybridExecutor(LocalExecutor(catalog, device=device), RemoteExecutor(), catalog=catalog)
    backend, model = hybrid.route("canny-text-to-image", None)
    assert backend.name == "remote" and model.startswith("lllyasviel/")  # not on disk: a provider may serve it


# ------------------------------------------------------------------------------- planned chain


async def test_controlnet_planned_chain_runs_with_the_global_plan_agent(tmp_path, monkeypatch, device):
    from hugginggpt.agent import GlobalPlanAgent
    from tests.agent.conftest import script
    from tests.tiny_diffusion import tiny_pipeline_path

    monkeypatch.setenv(STEPS_ENV, "2")
    photo = tmp_path / "inputs" / "photo.jpg"
    photo.parent.mkdir()
    Image.open(EXAMPLE).save(photo)
    catalog = ModelCatalog(shipped=False, scan_hf_cache=False)
    catalog.register_local(tiny_pipeline_path("controlnet-pipeline"), task="canny-text-to-image")
    tools = build_tools(["canny-control", "canny-text-to-image"],
                        executor=LocalExecutor(catalog, device=device), catalog=catalog)
    plan = [{"task": "canny-control", "id": 0, "dep": [-1], "args": {"image": str(photo)}},
            {"task": "canny-text-to-image", "id": 1, "dep": [0], "args": {"image": "<resource>-0", "text": "a castle"}}]
    llm = script(plan, "Here is the edge map and a castle drawn along it.")
    agent = GlobalPlanAgent(llm, tools, catalog, workspace_root=tmp_path / "runs")
    out = await agent.ainvoke({"input": "Make an edge map of photo.jpg, then a new image from it and 'a castle'",
                               "files": [str(photo)]})
    results = out["results"]
    assert [results[i]["status"] for i in (0, 1)] == ["ok", "ok"], results
    edges, castle = Path(results[0]["result"]["image"]), Path(results[1]["result"]["image"])
    assert Image.open(edges).size == Image.open(EXAMPLE).size
    assert Image.open(castle).format == "PNG" and castle.parent == edges.parent
    assert out["selections"][1]["model"] == str(tiny_pipeline_path("controlnet-pipeline"))
    assert "canny-control" in llm.prompts[0][-1].content or "canny-control" in str(llm.prompts[0])


def test_controlnet_planning_prompt_and_demonstrations_know_the_tasks():
    from hugginggpt.agent.plan import describe_tools
    from hugginggpt.agent.plan.prompt import demonstrations_for, format_task_list

    tasks = describe_tools(build_tools(), task_table())
    listed = format_task_list(tasks)
    assert all(f"- {name}(" in listed for name in JARVIS_NAMES)
    chosen = demonstrations_for("Make a HED image of cat.jpg, then a new image of a tiger from it", tasks, k=3)
    assert ["hed-control", "hed-text-to-image"] in [[s["task"] for s in d["plan"]] for d in chosen]
    hub_only = describe_tools(build_tools(hub_tasks()), task_table())  # e.g. TaskBench's domain: no ControlNet
    assert not any(s["task"] in JARVIS_NAMES for d in demonstrations_for("Make a HED image of cat.jpg", hub_only, k=5)
                   for s in d["plan"])
