"""Sentence embeddings on a real sentence-transformers model (all-MiniLM-L6-v2, from ../shared): one
vector per text, pooled as the model's own configuration says, checked against a reference computed
here from the model's token vectors and its pooling config; and the pooling config read as written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.executors.local_tasks.embeddings import Pooling, pool, read_pooling
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.table import get_task
from tests.shared import model_or_skip

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse.",
             "The new movie is awesome.", "The cat plays in the garden."]


@pytest.fixture(scope="module")
def minilm() -> Path:
    return model_or_skip("all-minilm-l6-v2")


@pytest.fixture(scope="module")
def executor(device) -> LocalExecutor:
    return LocalExecutor(device=device)


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(root=tmp_path / "run")


def embed(executor: LocalExecutor, workspace: Workspace, folder: Path, text: str) -> np.ndarray:
    call = TaskCall(task=get_task("feature-extraction"), args={"text": text}, workspace=workspace, model=str(folder))
    return np.asarray(executor.run(call)["data"])


def reference(folder: Path, text: str) -> np.ndarray:
    """What sentence-transformers computes, written out here: the model's last hidden states, the
    pooling its 1_Pooling/config.json turns on (over the attended tokens), then L2 normalisation
    when modules.json lists a Normalize module."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    config = json.loads((folder / "1_Pooling" / "config.json").read_text())
    modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
    batch = tokenizer([text], return_tensors="pt", truncation=True, max_length=256)
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state[0]
    mask = batch["attention_mask"][0].bool()
    tokens = hidden[mask]
    parts = []
    if config["pooling_mode_cls_token"]:
        parts.append(tokens[0])
    if config["pooling_mode_max_tokens"]:
        parts.append(tokens.max(dim=0).values)
    if config["pooling_mode_mean_tokens"]:
        parts.append(tokens.mean(dim=0))
    vector = torch.cat(parts)
    if "Normalize" in modules:
        vector = torch.nn.functional.normalize(vector, dim=0)
    return vector.numpy()


def test_feature_extraction_gives_the_models_own_sentence_embedding(executor, workspace, minilm):
    vector = embed(executor, workspace, minilm, "hello world")
    assert vector.shape == (384,)  # one pooled vector, not one per token
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)  # the model lists a Normalize module
    assert np.allclose(vector, reference(minilm, "hello world"), atol=2e-3 if executor.options.device == "cuda" else 1e-5)


def test_related_sentences_are_the_nearest(executor, workspace, minilm):
    vectors = np.stack([embed(executor, workspace, minilm, text) for text in SENTENCES])
    similarity = vectors @ vectors.T
    nearest = [int(np.argsort(-row)[1]) for row in similarity]  # the nearest other sentence
    assert nearest[0] == 1 and nearest[1] == 0  # eating food <-> eating bread
    assert similarity[0, 1] > similarity[0, 2] > similarity[0, 3]  # bread, then another man, then a movie


def test_sentence_similarity_is_the_cosine_of_the_same_embeddings(executor, workspace, minilm):
    call = TaskCall(task=get_task("sentence-similarity"), workspace=workspace, model=str(minilm),
                    args={"source_sentence": SENTENCES[0], "sentences": SENTENCES[1:]})
    scores = executor.run(call)["data"]
    source = embed(executor, workspace, minilm, SENTENCES[0])
    expected = [float(source @ embed(executor, workspace, minilm, text)) for text in SENTENCES[1:]]
    assert scores == pytest.approx(expected, abs=1e-5)
    assert executor.load_count == 1  # both tasks share the loaded model


def with_pooling(minilm: Path, tmp_path: Path, normalize: bool, **modes: bool) -> Path:
    """A copy of the model folder whose pooling config turns on ``modes`` (and lists Normalize or not)."""
    folder = tmp_path / "minilm"
    shutil.copytree(minilm, folder)
    config = json.loads((folder / "1_Pooling" / "config.json").read_text())
    config.update({key: False for key in config if key.startswith("pooling_mode_")})
    config.update({f"pooling_mode_{mode}": on for mode, on in modes.items()})
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    modules = json.loads((folder / "modules.json").read_text())
    if not normalize:
        modules = [m for m in modules if not m["type"].endswith("Normalize")]
    (folder / "modules.json").write_text(json.dumps(modules))
    return folder


def test_a_cls_pooled_model_gives_its_first_token_unnormalised(executor, workspace, minilm, tmp_path):
    folder = with_pooling(minilm, tmp_path, normalize=False, cls_token=True)
    vector = embed(executor, workspace, folder, "hello world")
    assert read_pooling(folder) == Pooling(modes=("cls",), normalize=False, max_length=256, declared=True)
    assert vector.shape == (384,) and np.linalg.norm(vector) != pytest.approx(1.0, abs=1e-3)
    assert np.allclose(vector, reference(folder, "hello world"), atol=2e-3 if executor.options.device == "cuda" else 1e-5)


def test_modes_turned_on_together_are_concatenated_in_sentence_transformers_order(minilm, tmp_path):
    folder = with_pooling(minilm, tmp_path, normalize=True, mean_tokens=True, cls_token=True)
    assert read_pooling(folder).modes == ("cls", "mean")
    tokens = np.array([[1.0, 0.0], [3.0, 4.0]])
    assert pool(tokens, Pooling(modes=("cls", "max", "mean"))) == [1.0, 0.0, 3.0, 4.0, 2.0, 2.0]
    assert pool(tokens, Pooling(modes=("lasttoken",), normalize=True)) == pytest.approx([0.6, 0.8])
    assert pool(tokens, Pooling(modes=("weightedmean",))) == pytest.approx([7 / 3, 8 / 3])


def test_a_folder_without_a_pooling_config_gets_the_mean_of_its_tokens(tmp_path):
    assert read_pooling(tmp_path) == Pooling(modes=("mean",), normalize=False, declared=False)


def test_a_module_it_cannot_run_is_named(minilm, tmp_path, workspace, executor):
    folder = with_pooling(minilm, tmp_path, normalize=True, mean_tokens=True)
    modules = json.loads((folder / "modules.json").read_text())
    modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ModelLoadError, match=r"^feature-extraction: the sentence-transformers model in .* has a "
                                             r"Dense module, which the local executor does not run"):
        embed(executor, workspace, folder, "hello")


def test_the_tool_says_which_vector_comes_back():
    from hugginggpt.tools import build_tools

    (tool,) = build_tools(["feature-extraction"])
    assert "Returns: data (data: one vector for the whole text, pooled as the model's sentence-transformers " \
           "config says" in tool.description
