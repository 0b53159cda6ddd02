"""folder_task: the pipeline tag of a model folder, from its README or its config."""

from __future__ import annotations

import json
import shutil

import pytest

from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.executors.local_tasks.folder_task import folder_task
from tests.tiny_models import BUILDERS, tiny_model_path

pytest.importorskip("transformers")

# Folders that serve several tasks infer their most specific one.
EXPECTED = {"summarization": "text2text-generation"}


@pytest.mark.parametrize("task", sorted(BUILDERS))
def test_each_tiny_model_folder_infers_its_task(task):
    inferred = folder_task(tiny_model_path(task))
    assert inferred == EXPECTED.get(task, task)
    assert inferred in LocalExecutor.tasks()  # and the executor can run what it infers


def test_readme_pipeline_tag_wins_over_the_config(tmp_path):
    folder = tmp_path / "tagged"
    shutil.copytree(tiny_model_path("text-generation"), folder)
    (folder / "README.md").write_text("---\nlicense: mit\npipeline_tag: conversational\n---\n# A chat model\n")
    assert folder_task(folder) == "conversational"


def test_readme_without_front_matter_falls_back_to_the_config(tmp_path):
    folder = tmp_path / "plain"
    shutil.copytree(tiny_model_path("fill-mask"), folder)
    (folder / "README.md").write_text("pipeline_tag: text-generation is only mentioned in prose\n")
    assert folder_task(folder) == "fill-mask"


def test_diffusers_folders_are_recognised_by_their_model_index(tmp_path):
    (tmp_path / "model_index.json").write_text(json.dumps(
        {"_class_name": "StableDiffusionPipeline", "text_encoder": ["transformers", "CLIPTextModel"]}))
    assert folder_task(tmp_path) == "text-to-image"


def test_unknown_folders_have_no_task(tmp_path):
    assert folder_task(tmp_path) is None
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["NoSuchModelForAnything"]}))
    assert folder_task(tmp_path) is None


def test_without_transformers_the_architecture_name_says_the_task(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "transformers.models.auto", None)  # importing it fails
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["AcmeForCausalLM"]}))
    assert folder_task(tmp_path) == "text-generation"


def test_a_malformed_folder_has_no_task(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"],
                                                      "id2label": 3}))
    assert folder_task(tmp_path) is None
    (tmp_path / "config.json").write_text("[1, 2]")
    assert folder_task(tmp_path) is None
