"""LocalExecutor core: model resolution, the LRU model cache, concurrency, and typed errors."""

from __future__ import annotations

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from hugginggpt.errors import ModelLoadError, TaskError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local import LocalExecutor, default_device
from hugginggpt.tools.executors.local_tasks.cache import ModelCache
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import get_task
from tests.tiny_models import tiny_model_path

pytest.importorskip("torch")


@dataclass
class Card:
    id: str
    task: str
    local_path: str | None = None


class FolderCatalog:
    """A real (minimal) catalog: Hub ids mapped to local folders, candidates in a fixed order."""

    def __init__(self, cards: list[Card]):
        self.cards = cards

    def local_path(self, model_id: str) -> Path | None:
        for card in self.cards:
            if card.id == model_id and card.local_path:
                return Path(card.local_path)
        return None

    def candidates(self, task: str, k: int = 5) -> list[Card]:
        return [card for card in self.cards if card.task == task][:k]


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(root=tmp_path / "run")


def classify(executor: LocalExecutor, workspace: Workspace, model: str | None, text: str = "the cat sat") -> dict:
    call = TaskCall(task=get_task("text-classification"), args={"text": text}, workspace=workspace, model=model)
    return executor.run(call)


# ---------------------------------------------------------------------------- resolution


def test_a_local_folder_runs_and_returns_scored_labels(workspace, device):
    executor = LocalExecutor(device=device)
    folder = tiny_model_path("text-classification")
    assert executor.can_run("text-classification", str(folder))
    result = classify(executor, workspace, str(folder))
    assert result["data"][0]["label"] in {"NEGATIVE", "POSITIVE"}
    assert 0.0 <= result["data"][0]["score"] <= 1.0
    assert result["text"].startswith(result["data"][0]["label"])


def test_a_hub_id_the_catalog_maps_to_a_folder_runs(workspace, device):
    folder = tiny_model_path("text-classification")
    catalog = FolderCatalog([Card("acme/tiny-sentiment", "text-classification", str(folder))])
    executor = LocalExecutor(catalog, device=device)
    assert executor.resolve("text-classification", "acme/tiny-sentiment") == folder
    assert classify(executor, workspace, "acme/tiny-sentiment")["data"]


def test_no_model_given_takes_the_first_local_catalog_candidate(workspace, device):
    folder = tiny_model_path("text-classification")
    catalog = FolderCatalog([
        Card("remote/only", "text-classification"),  # not on disk: skipped
        Card("acme/tiny-sentiment", "text-classification", str(folder)),
    ])
    executor = LocalExecutor(catalog, device=device)
    assert executor.can_run("text-classification", None)
    assert classify(executor, workspace, None)["data"]
    assert executor.loaded_models() == [str(folder)]


def test_a_hub_id_in_the_hf_cache_resolves_without_network(tmp_path, monkeypatch, device):
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    repo = cache / "models--acme--cached-model"
    commit = "0" * 40
    shutil.copytree(tiny_model_path("text-classification"), repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    executor = LocalExecutor(device=device)
    assert executor.resolve("text-classification", "acme/cached-model") == (repo / "snapshots" / commit).resolve()
    assert not executor.can_run("text-classification", "acme/not-cached")


def test_missing_model_is_a_model_load_error_naming_the_task(workspace, tmp_path, device):
    executor = LocalExecutor(device=device)
    missing = str(tmp_path / "no-such-model")
    assert not executor.can_run("text-classification", missing)
    with pytest.raises(ModelLoadError) as err:
        classify(executor, workspace, missing)
    assert err.value.task == "text-classification"
    assert "not available locally" in str(err.value)


def test_no_model_and_no_catalog_says_so(workspace, device):
    executor = LocalExecutor(device=device)
    assert not executor.can_run("text-classification", None)
    with pytest.raises(ModelLoadError, match="no local model for task text-classification"):
        classify(executor, workspace, None)


def test_corrupt_config_is_a_one_line_model_load_error(workspace, tmp_path, device):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_path("text-classification"), broken)
    (broken / "config.json").write_text("{ this is not json")
    executor = LocalExecutor(device=device)
    with pytest.raises(ModelLoadError) as err:
        classify(executor, workspace, str(broken))
    message = str(err.value)
    assert message.startswith("text-classification: cannot load the model in")
    assert "\n" not in message
    assert executor.load_count == 0 and executor.loaded_models() == []


def test_tasks_without_a_local_handler_cannot_run(workspace, device):
    executor = LocalExecutor(device=device)
    folder = str(tiny_model_path("text-classification"))
    assert not executor.can_run("tabular-regression", folder)
    with pytest.raises(ModelLoadError, match="no local implementation"):
        executor.run(TaskCall(task=get_task("tabular-regression"), args={"table": {"a": ["1"]}},
                              workspace=workspace, model=folder))


def test_diffusion_tasks_need_the_diffusers_extra(workspace, device):
    try:
        import diffusers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("diffusers is installed")
    executor = LocalExecutor(device=device)
    folder = str(tiny_model_path("text-classification"))
    assert not executor.can_run("text-to-image", folder)
    with pytest.raises(ModelLoadError, match=r"install hugginggpt\[diffusers\]"):
        executor.run(TaskCall(task=get_task("text-to-image"), args={"text": "a cat"},
                              workspace=workspace, model=folder))


def test_inference_failures_are_task_errors_not_load_errors(workspace, device):
    executor = LocalExecutor(device=device)
    call = TaskCall(task=get_task("fill-mask"), args={"text": "no mask token here"},
                    workspace=workspace, model=str(tiny_model_path("fill-mask")))
    with pytest.raises(TaskError) as err:
        executor.run(call)
    assert not isinstance(err.value, ModelLoadError)
    assert err.value.task == "fill-mask"


def test_default_device_follows_the_hardware():
    import torch

    assert default_device() == ("cuda" if torch.cuda.is_available() else "cpu")
    assert LocalExecutor().options.device == default_device()
    assert LocalExecutor(device="cpu").options.device == "cpu"


# ---------------------------------------------------------------------------- the model cache


def test_a_model_is_loaded_once_and_reused(workspace, device):
    executor = LocalExecutor(device=device)
    folder = str(tiny_model_path("text-classification"))
    classify(executor, workspace, folder, "the cat")
    classify(executor, workspace, folder, "the dog")
    assert executor.load_count == 1


def test_lru_eviction_keeps_at_most_max_models(workspace, device):
    executor = LocalExecutor(max_models=1, device=device)
    classifier = str(tiny_model_path("text-classification"))
    tagger = str(tiny_model_path("token-classification"))
    classify(executor, workspace, classifier)
    executor.run(TaskCall(task=get_task("token-classification"), args={"text": "the man in paris"},
                          workspace=workspace, model=tagger))
    assert executor.loaded_models() == [tagger]
    classify(executor, workspace, classifier)  # evicted before: loaded again
    assert executor.load_count == 3
    assert executor.loaded_models() == [classifier]


def test_concurrent_calls_on_one_model_load_it_once(workspace, device):
    executor = LocalExecutor(device=device)
    folder = str(tiny_model_path("text-classification"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: classify(executor, workspace, folder, f"the cat {i}"), range(4)))
    assert all(r["data"] for r in results)
    assert executor.load_count == 1


def test_cache_least_recently_used_is_evicted_first():
    cache = ModelCache(max_models=2)
    for key in ("a", "b"):
        cache.get(key, lambda key=key: object())
    cache.get("a", lambda: pytest.fail("a is cached"))  # a becomes most recent
    cache.get("c", object)
    assert cache.loaded_keys() == ["a", "c"]
    assert cache.load_count == 3


def test_cache_eviction_frees_the_model():
    import gc
    import weakref

    class Model:
        pass

    cache = ModelCache(max_models=1)
    first = cache.get("a", Model)
    ref = weakref.ref(first)
    del first
    cache.get("b", Model)
    gc.collect()
    assert ref() is None


def test_cache_loads_of_different_models_take_turns():
    """Loads are serialised process-wide (parallel transformers loads leave weights on the meta device:
    see test_different_models_loading_at_once_all_load_their_weights); both models still load."""
    cache = ModelCache(max_models=4)
    inside, most = [0], [0]
    lock = threading.Lock()

    def load(name):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.2)
        with lock:
            inside[0] -= 1
        return name

    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = list(pool.map(lambda name: cache.get(name, lambda: load(name)), ["x", "y"]))
    assert loaded == ["x", "y"] and cache.load_count == 2
    assert most[0] == 1


def test_cache_loads_one_key_once_under_contention():
    cache = ModelCache(max_models=4)
    calls = []

    def slow_load():
        calls.append(1)
        time.sleep(0.2)
        return object()

    with ThreadPoolExecutor(max_workers=6) as pool:
        models = list(pool.map(lambda _: cache.get("same", slow_load), range(6)))
    assert len(calls) == 1 and cache.load_count == 1
    assert all(m is models[0] for m in models)


def test_a_failed_load_is_not_cached_and_can_be_retried():
    cache = ModelCache(max_models=2)

    def failing():
        raise OSError("disk on fire")

    with pytest.raises(OSError):
        cache.get("k", failing)
    assert cache.get("k", lambda: "ok") == "ok"
    assert cache.load_count == 1


def test_corrupt_weights_file_is_a_model_load_error(workspace, tmp_path, device):
    broken = tmp_path / "broken-weights"
    shutil.copytree(tiny_model_path("text-classification"), broken)
    (broken / "model.safetensors").write_bytes(b"not safetensors")
    config = json.loads((broken / "config.json").read_text())
    assert config["architectures"]  # the config itself is fine
    with pytest.raises(ModelLoadError, match="text-classification: cannot load the model"):
        classify(LocalExecutor(device=device), workspace, str(broken))


def test_download_mode_fetches_a_hub_model_on_first_use(workspace, monkeypatch):
    """The local policy downloads Hub models into the cache; the default mode never does."""
    import hugginggpt.tools.executors.local as local

    fetched = []

    def fake_hub(model_id: str) -> Path:  # the Hub is unreachable here: serve the tiny model instead
        fetched.append(model_id)
        return tiny_model_path("text-classification")

    monkeypatch.setattr(local, "download_snapshot", fake_hub)
    assert LocalExecutor().can_run("text-classification", "org/not-cached") is False
    executor = LocalExecutor(download=True)
    assert executor.can_run("text-classification", "org/not-cached") is True
    result = classify(executor, workspace, "org/not-cached")
    assert isinstance(result["data"][0]["score"], float)
    assert fetched == ["org/not-cached"]


def test_a_failed_download_is_a_model_load_error(workspace, monkeypatch):
    import hugginggpt.tools.executors.local as local

    def unreachable(model_id: str) -> Path:
        raise OSError("Name or service not known")

    monkeypatch.setattr(local, "download_snapshot", unreachable)
    with pytest.raises(ModelLoadError, match="text-classification: cannot download org/x from the Hub"):
        classify(LocalExecutor(download=True), workspace, "org/x")


def test_different_models_loading_at_once_all_load_their_weights(device):
    """transformers builds a model under process-wide patches (meta device, skipped init), so two loads
    at once in one process must not interleave: each model gets its real weights."""
    import torch

    tasks = ["image-to-text", "text-classification", "token-classification", "image-classification"]
    folders = {task: tiny_model_path(task) for task in tasks}
    for _ in range(3):
        executor = LocalExecutor(device=device)
        start = threading.Barrier(len(tasks))

        def load(task: str):
            start.wait()
            return executor._loaded(task, str(folders[task]))[1]

        with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
            loaded = list(pool.map(load, tasks))
        for task, model in zip(tasks, loaded):
            modules = [m for m in (model if isinstance(model, tuple) else (model,)) if isinstance(m, torch.nn.Module)]
            modules += [getattr(model, "model", None)] if not modules and isinstance(getattr(model, "model", None), torch.nn.Module) else []
            for module in modules:
                assert not any(p.is_meta for p in module.parameters()), task
