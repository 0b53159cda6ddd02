"""A model folder the user registers stands for the Hub id it names, runs the task it was named for,
and a model that cannot be loaded or downloaded gives way to the next runnable one (local first),
with the reason recorded. Uses the real sentence-transformers/all-MiniLM-L6-v2 folder from
``../shared/models/fetch-model`` (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.catalog import ModelCard, ModelCatalog
from hugginggpt.tools.catalog.catalog import named_hub_ids
from hugginggpt.tools.executors import HybridExecutor, TaskCall
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import get_task
from tests.shared import model_or_skip

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
OTHER = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"  # listed, not on disk


@pytest.fixture(scope="module")
def minilm() -> Path:
    return model_or_skip("all-minilm-l6-v2")


@pytest.fixture
def renamed_minilm(minilm, tmp_path) -> Path:
    """The same model under a folder name that says nothing (weights linked, not copied)."""
    folder = tmp_path / "my-embedder"
    folder.mkdir()
    for entry in minilm.iterdir():
        (folder / entry.name).symlink_to(entry)
    return folder


def test_the_real_minilm_folder_stands_for_its_hub_id(minilm, renamed_minilm):
    for folder in (minilm, renamed_minilm):  # by its mirror name, and by its model card's code
        catalog = ModelCatalog(scan_hf_cache=False)
        card = catalog.register_local(folder, task="sentence-similarity")
        assert card.id == MINILM and card.local and card.downloads > 0  # the shipped card, now local
        assert catalog.local_path(MINILM) == folder.resolve()
        assert catalog.candidates("sentence-similarity", k=1)[0].local
        assert any(c.id == MINILM and c.local for c in catalog.candidates("feature-extraction", k=50))
        assert catalog.preferred("sentence-similarity") is None  # registered, not named for the task


def test_named_hub_ids_read_name_card_and_config_but_not_the_base_model(tmp_path):
    snapshot = tmp_path / "models--acme--captioner" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    assert named_hub_ids(snapshot) == ["acme/captioner"]
    folder = tmp_path / "finetuned"
    folder.mkdir()
    (folder / "README.md").write_text(
        "---\nbase_model: google-bert/bert-base-uncased\nmodel-index:\n- name: acme/sentiment\n  results: []\n---\n"
        "# acme/sentiment\n```python\npipeline(model='acme/sentiment-v2')\n```\n")
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "acme/sentiment-base"}))
    assert named_hub_ids(folder) == ["acme/sentiment", "acme/sentiment-base", "acme/sentiment-v2"]


def test_a_folder_naming_an_unlisted_id_keeps_its_path_as_id(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "nobody/unlisted"}))
    catalog = ModelCatalog([ModelCard("acme/listed", "text-classification", downloads=5)],
                           shipped=False, scan_hf_cache=False)
    card = catalog.register_local(folder, task="text-classification", preferred=True)
    assert card.id == str(folder.resolve()) and card.local
    assert catalog.preferred("text-classification").id == card.id
    assert catalog.preferred("summarization") is None


# ------------------------------------------------------------------ execution: fallback with reasons


def local_executor(catalog, device):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hugginggpt.tools.executors.local import LocalExecutor

    return LocalExecutor(catalog, download=True, device=device)


def similarity_call(model: str | None, tmp_path) -> TaskCall:
    args = {"source_sentence": "A cat sits on the mat",
            "sentences": ["A dog lies on the rug", "Quarterly stock prices fell sharply"]}
    return TaskCall(task=get_task("sentence-similarity"), args=args, model=model, workspace=Workspace(tmp_path / "ws"))


def scores(result) -> list[float]:
    data = result["data"]
    return [float(x["score"]) if isinstance(x, dict) else float(x) for x in data]


@pytest.fixture
def unreachable_hub(monkeypatch):
    """The Hub at a closed local port: a download fails at once, as on a machine without network."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")


def test_a_model_that_cannot_be_downloaded_gives_way_to_the_local_one(minilm, tmp_path, unreachable_hub, device):
    catalog = ModelCatalog(scan_hf_cache=False)
    catalog.register_local(minilm, task="sentence-similarity")
    executor = HybridExecutor(local_executor(catalog, device), None, catalog=catalog, policy="local")
    call = similarity_call(OTHER, tmp_path)
    result = executor.run(call)
    close, far = scores(result)
    assert close > far  # the real model ran: the cat/dog sentence is nearer than the stock prices
    assert call.options["model"] == MINILM and call.options["backend"] == "local"
    [given_up] = call.options["fallbacks"]
    assert given_up["model"] == OTHER and "cannot download" in given_up["error"]


def test_offline_mode_skips_straight_to_the_models_on_disk(minilm, tmp_path, monkeypatch, device):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    catalog = ModelCatalog(scan_hf_cache=False)
    catalog.register_local(minilm, task="sentence-similarity")
    local = local_executor(catalog, device)
    assert not local.can_run("sentence-similarity", OTHER)  # nothing can be fetched offline
    executor = HybridExecutor(local, None, catalog=catalog, policy="local")
    assert executor.pick_model("sentence-similarity") == MINILM
    call = similarity_call(OTHER, tmp_path)
    executor.run(call)
    assert call.options["model"] == MINILM
    assert call.options["fallbacks"][0]["error"] == (
        f"model {OTHER!r} cannot run on this machine (execution policy 'local'): it is not on this machine, and "
        "HF_HUB_OFFLINE=1 forbids downloading one")


def test_the_model_the_user_named_runs_and_is_never_swapped(minilm, tmp_path, unreachable_hub, device):
    catalog = ModelCatalog(scan_hf_cache=False)
    catalog.register_local(minilm, task="sentence-similarity", preferred=True)
    executor = HybridExecutor(local_executor(catalog, device), None, catalog=catalog, policy="local")
    assert executor.pick_model("sentence-similarity") == MINILM
    call = similarity_call(None, tmp_path)
    executor.run(call)
    assert call.options["model"] == MINILM and "fallbacks" not in call.options

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert"}')  # no weights: cannot load
    catalog.register_local(broken, task="sentence-similarity", preferred=True)
    call = similarity_call(str(broken.resolve()), tmp_path)
    with pytest.raises(ModelLoadError, match="cannot load"):
        executor.run(call)  # the user's own choice fails loudly, not silently on another model
    assert [t["model"] for t in call.options["fallbacks"]] == [str(broken.resolve())]
