"""ModelCatalog: shipped data, ranking by downloads, local models, Hub refresh (local server), persistence."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from huggingface_hub import HfApi

from hugginggpt.errors import ModelLoadError, UnknownTaskError
from hugginggpt.tools.catalog import CatalogError, ModelCard, ModelCatalog
from hugginggpt.tools.table import task_table
from tests.inference_server import InferenceServer


def empty_catalog(*cards: ModelCard) -> ModelCatalog:
    return ModelCatalog(list(cards), shipped=False, scan_hf_cache=False)


def readme_folder(path: Path, tag: str) -> Path:
    path.mkdir(parents=True)
    (path / "README.md").write_text(f"---\nlicense: mit\npipeline_tag: {tag}\n---\n# A model\n")
    return path


# ----------------------------------------------------------------------------------- shipped


def test_shipped_catalog_covers_every_task_with_real_hub_ids():
    catalog = ModelCatalog(scan_hf_cache=False)
    # JARVIS's ControlNet annotators come from one weights repository (lllyasviel/Annotators), or none (canny).
    single_source = {"canny-control": 0, "hed-control": 1, "mlsd-control": 1}
    for task in task_table():
        cards = catalog.candidates(task, k=10)
        assert 2 <= len(cards) <= 8 or len(cards) == single_source.get(task), task
        for card in cards:
            assert card.task == task and card.downloads > 0 and card.description
            assert card.id.count("/") == 1 and not card.local


def test_shipped_catalog_knows_the_paper_models():
    catalog = ModelCatalog(scan_hf_cache=False)
    ids = {card.id for task in catalog.tasks() for card in catalog.candidates(task, k=10)}
    assert {"facebook/detr-resnet-50", "openai/whisper-large-v3", "facebook/bart-large-cnn",
            "Salesforce/blip-image-captioning-large", "google/vit-base-patch16-224"} <= ids


# ----------------------------------------------------------------------------------- ranking


def test_candidates_are_ranked_by_downloads_not_likes():
    catalog = empty_catalog(
        ModelCard("a/loved", "summarization", downloads=10, likes=9000),
        ModelCard("b/used", "summarization", downloads=90000, likes=3),
        ModelCard("c/middle", "summarization", downloads=500, likes=50),
    )
    assert [c.id for c in catalog.candidates("summarization")] == ["b/used", "c/middle", "a/loved"]
    assert [c.id for c in catalog.candidates("summarization", k=1)] == ["b/used"]


def test_candidates_are_copies():
    catalog = empty_catalog(ModelCard("a/m", "summarization", downloads=1, tags=["x"]))
    card = catalog.candidates("summarization")[0]
    card.downloads = 10**9
    card.tags.append("y")
    assert catalog.candidates("summarization")[0].downloads == 1
    assert catalog.candidates("summarization")[0].tags == ["x"]


def test_unknown_task_is_a_typed_error_with_a_hint():
    with pytest.raises(UnknownTaskError, match="did you mean image-classification"):
        empty_catalog().candidates("image-clasification")


def test_a_table_task_without_models_is_empty():
    assert empty_catalog().candidates("depth-estimation") == []


# ---------------------------------------------------------------------------------- local models


def test_register_local_infers_the_task_of_a_saved_tiny_model(tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=32, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, num_labels=2)
    folder = tmp_path / "tiny-sentiment"
    BertForSequenceClassification(config).save_pretrained(folder)
    catalog = empty_catalog(ModelCard("x/remote", "text-classification", downloads=100))

    card = catalog.register_local(folder)
    assert card.task == "text-classification" and card.local
    assert card.id == str(folder.resolve())
    assert catalog.local_path(card.id) == folder.resolve()
    marked = {c.id: c.local for c in catalog.candidates("text-classification")}
    assert marked == {"x/remote": False, str(folder.resolve()): True}


def test_register_local_under_a_hub_id_keeps_its_ranking(tmp_path):
    folder = readme_folder(tmp_path / "bart", "summarization")
    catalog = ModelCatalog(scan_hf_cache=False)
    card = catalog.register_local(folder, model_id="facebook/bart-large-cnn")
    assert card.downloads > 1_000_000 and card.local_path == str(folder.resolve())
    assert catalog.candidates("summarization", k=1)[0].local
    assert catalog.local_path("facebook/bart-large-cnn") == folder.resolve()
    assert catalog.local_path("google/pegasus-xsum") is None


def test_register_local_reads_the_readme_tag_and_explicit_task_wins(tmp_path):
    catalog = empty_catalog()
    folder = readme_folder(tmp_path / "m", "image-classification")
    assert catalog.register_local(folder).task == "image-classification"
    assert catalog.register_local(folder, task="zero-shot-image-classification").task == \
        "zero-shot-image-classification"


def test_register_local_errors(tmp_path):
    catalog = empty_catalog()
    with pytest.raises(ModelLoadError, match="not found"):
        catalog.register_local(tmp_path / "missing")
    (tmp_path / "blank").mkdir()
    with pytest.raises(ModelLoadError, match="pass task="):
        catalog.register_local(tmp_path / "blank")
    with pytest.raises(UnknownTaskError):
        catalog.register_local(tmp_path / "blank", task="teleportation")


def fake_hf_cache(root: Path, repo_id: str, files: dict[str, str]) -> Path:
    """The Hugging Face cache layout: blobs, a snapshot of symlinks, and refs/main."""
    repo = root / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    for index, (name, content) in enumerate(files.items()):
        blob = repo / "blobs" / f"{index:040d}"
        blob.write_text(content)
        (snapshot / name).symlink_to(Path("../..") / "blobs" / blob.name)
    return snapshot


def test_scan_hf_cache_marks_and_adds_cached_models(tmp_path):
    cache = tmp_path / "hub"
    vit = fake_hf_cache(cache, "acme/vit-colors", {"config.json": json.dumps(
        {"architectures": ["ViTForImageClassification"], "model_type": "vit"})})
    bart = fake_hf_cache(cache, "facebook/bart-large-cnn", {"weights.bin": "x"})  # no task readable
    fake_hf_cache(cache, "acme/mystery", {"weights.bin": "x"})

    catalog = ModelCatalog(hf_cache_dir=cache)
    assert catalog.local_path("acme/vit-colors") == vit
    assert catalog.local_path("facebook/bart-large-cnn") == bart
    assert catalog.local_path("acme/mystery") is None
    assert "acme/vit-colors" in {c.id for c in catalog.candidates("image-classification", k=20)}
    assert all(c.id != "acme/mystery" for t in catalog.tasks() for c in catalog.candidates(t, k=20))


def test_a_missing_hf_cache_is_fine(tmp_path):
    catalog = ModelCatalog(hf_cache_dir=tmp_path / "nowhere")
    assert catalog.scan_hf_cache(tmp_path / "nowhere") == 0
    assert len(catalog) > 100


# ---------------------------------------------------------------------------------- Hub refresh


def test_refresh_merges_the_hub_ranking(tmp_path):
    with InferenceServer() as server:
        catalog = empty_catalog(ModelCard("acme/sentiment-small", "text-classification", downloads=1,
                                          description="kept from before"))
        counts = catalog.refresh(["text-classification", "summarization"], limit=5, api=HfApi(endpoint=server.url))
        listing = [r for r in server.requests if r["path"].startswith("/api/models?")]
    assert counts == {"text-classification": 2, "summarization": 1}
    cards = catalog.candidates("text-classification")
    assert [(c.id, c.downloads) for c in cards] == [("acme/sentiment-large", 98000), ("acme/sentiment-small", 1200)]
    assert cards[1].description == "kept from before"
    assert cards[0].tags == ["text-classification"]
    query = parse_qs(urlparse(listing[0]["path"]).query)
    assert query["pipeline_tag"] == ["text-classification"] and query["sort"] == ["downloads"]
    assert query["limit"] == ["5"]


def test_refresh_respects_the_limit():
    hub = {f"org/m{i}": {"pipeline_tag": "fill-mask", "downloads": i, "likes": 0} for i in range(10)}
    with InferenceServer(hub_models=hub) as server:
        catalog = empty_catalog()
        catalog.refresh(["fill-mask"], limit=3, api=HfApi(endpoint=server.url))
    assert [c.id for c in catalog.candidates("fill-mask", k=10)] == ["org/m9", "org/m8", "org/m7"]


def test_refresh_failure_is_a_catalog_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(CatalogError, match="cannot list summarization models"):
        empty_catalog().refresh(["summarization"], api=HfApi(endpoint=f"http://127.0.0.1:{port}"))


def test_refresh_rejects_unknown_tasks():
    with pytest.raises(UnknownTaskError):
        empty_catalog().refresh(["not-a-task"], api=HfApi(endpoint="http://127.0.0.1:9"))


# ---------------------------------------------------------------------------------- persistence


def test_save_and_load_round_trip(tmp_path):
    folder = readme_folder(tmp_path / "local-asr", "automatic-speech-recognition")
    catalog = empty_catalog(ModelCard("a/b", "summarization", downloads=7, likes=2, tags=["t"], description="d"))
    catalog.register_local(folder, model_id="me/asr")
    path = catalog.save(tmp_path / "saved" / "catalog.json")

    loaded = ModelCatalog.load(path)
    assert loaded.tasks() == ["automatic-speech-recognition", "summarization"]
    assert loaded.candidates("summarization") == catalog.candidates("summarization")
    assert loaded.local_path("me/asr") == folder.resolve()
    assert [p.name for p in path.parent.iterdir()] == ["catalog.json"]  # no temporary file left


def test_load_errors_are_typed(tmp_path):
    with pytest.raises(CatalogError, match="cannot read"):
        ModelCatalog.load(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"summarization": [{"name": "no id"}]}}')
    with pytest.raises(CatalogError, match="not a model catalog"):
        ModelCatalog.load(bad)
