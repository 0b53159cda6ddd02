"""Text tasks on a local GGUF model (llama.cpp): naming, catalog cards, the controller's own model, envelopes."""

from __future__ import annotations

import pytest

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools import get_task
from hugginggpt.tools.catalog import ModelCatalog
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local_tasks import HANDLERS, gguf_text
from hugginggpt.tools.resources import Workspace
from tests.shared import gguf_or_skip

PARAGRAPH = ("The city council met on Tuesday to discuss the new bicycle lanes. After a long debate, the members "
             "voted to build twelve kilometres of protected lanes along the river by next summer, paid for by "
             "a regional transport grant.")


def _call(tmp_path, task, model=None, **args) -> TaskCall:
    return TaskCall(task=get_task(task), args=args, workspace=Workspace(tmp_path / "run"), model=model)


def test_every_gguf_task_has_a_handler_and_a_hub_gguf_card():
    catalog = ModelCatalog(scan_hf_cache=False)
    for task in gguf_text.TASKS:
        assert task in HANDLERS
        cards = [card for card in catalog.candidates(task, k=100) if card.file]
        assert cards, task
        assert all(card.file.endswith(".gguf") and card.id.count("/") == 1 for card in cards)
    assert "Qwen/Qwen2.5-1.5B-Instruct-GGUF" in {c.id for c in catalog.candidates("summarization", k=100)}


def test_prompts_put_fixed_instructions_first_and_name_languages(tmp_path):
    call = _call(tmp_path, "translation", text="Bonjour", src_lang="fra_Latn", tgt_lang="de")
    (role, system), (_, user) = gguf_text.messages(call)
    assert role == "system" and "Bonjour" not in system
    assert user.startswith("Translate from French into German") and user.endswith("Bonjour")
    assert gguf_text.language_name("fr_XX") == "French" and gguf_text.language_name("xx") == "xx"
    qa = gguf_text.messages(_call(tmp_path, "question-answering", question="Who?", context="Ann did."))
    assert qa[0][0] == "system" and qa[1][1].endswith("Question: Who?")


def test_gguf_references(tmp_path):
    assert gguf_text.gguf_path("gguf:~/m.gguf").name == "m.gguf"
    assert gguf_text.gguf_path("/x/Model.GGUF") is not None
    assert gguf_text.gguf_path("org/name") is None
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    assert not gguf_text.is_gguf_file(fake)
    assert gguf_text.model_file("summarization", f"gguf:{fake}") is None


def test_registering_a_bad_gguf_is_a_clear_error(tmp_path):
    catalog = ModelCatalog(scan_hf_cache=False)
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        catalog.register_local(f"gguf:{fake}", task="summarization")
    with pytest.raises(ModelLoadError, match="GGUF file not found"):
        catalog.register_local(f"gguf:{tmp_path / 'missing.gguf'}", task="summarization")


def test_a_gguf_for_a_task_without_gguf_support_is_refused(tmp_path):
    path = gguf_or_skip("smollm2-135m")
    from hugginggpt.tools.executors.local import LocalExecutor

    executor = LocalExecutor(ModelCatalog(scan_hf_cache=False))
    assert executor.resolve("image-classification", f"gguf:{path}") is None
    assert executor.resolve("summarization", f"gguf:{path}") is not None


def test_a_hub_gguf_card_runs_from_the_hf_cache(tmp_path, monkeypatch):
    """A catalog card ``Qwen/...-GGUF`` with its ``file`` resolves to that file in the HF cache layout."""
    path = gguf_or_skip("smollm2-135m")
    from hugginggpt.tools.executors.local import LocalExecutor

    hub_cache = tmp_path / "hub"
    repo = hub_cache / "models--Qwen--Qwen2.5-0.5B-Instruct-GGUF"
    revision = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    (repo / "snapshots" / revision).mkdir(parents=True)
    (repo / "snapshots" / revision / "qwen2.5-0.5b-instruct-q4_k_m.gguf").symlink_to(path)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(hub_cache))
    executor = LocalExecutor(ModelCatalog(scan_hf_cache=False))
    found = executor.resolve("summarization", "Qwen/Qwen2.5-0.5B-Instruct-GGUF")
    assert found is not None and found.name == "qwen2.5-0.5b-instruct-q4_k_m.gguf"
    assert executor.resolve("summarization", "Qwen/Qwen2.5-1.5B-Instruct-GGUF") is None  # a card, not cached


@pytest.fixture(scope="module")
def smollm() -> str:
    return gguf_or_skip("smollm2-135m")


@pytest.mark.slow
def test_local_model_gguf_runs_summarization_and_the_run_records_the_model(tmp_path, smollm):
    from hugginggpt.tools.executors.hybrid import HybridExecutor
    from hugginggpt.tools.executors.local import LocalExecutor

    catalog = ModelCatalog(scan_hf_cache=False)
    card = catalog.register_local(f"gguf:{smollm}", task="summarization")
    executor = HybridExecutor(LocalExecutor(catalog), None, catalog=catalog, policy="local")
    call = _call(tmp_path, "summarization", model=card.id, text=PARAGRAPH, max_new_tokens=48)
    result = executor.run(call)
    assert set(result) == {"text"} and result["text"].strip()
    assert call.options["backend"] == "local" and call.options["model"] == card.id
    assert card.id.endswith(".gguf")


@pytest.mark.slow
def test_the_controllers_own_model_serves_text_tasks_without_a_second_copy(tmp_path, smollm):
    from hugginggpt.build import offer_controller
    from hugginggpt.llm.llamacpp import LlamaCppChatModel
    from hugginggpt.tools.executors.hybrid import HybridExecutor
    from hugginggpt.tools.executors.local import LocalExecutor

    controller = LlamaCppChatModel(model_path=smollm).load()  # the default context, larger than a task copy's
    catalog = ModelCatalog(scan_hf_cache=False)
    offer_controller(catalog, controller)
    local = LocalExecutor(catalog)
    executor = HybridExecutor(local, None, catalog=catalog, policy="local")
    # Nothing else for these tasks is on disk: the controller's file is picked.
    assert executor.pick_model("translation") == str(catalog.local_path(executor.pick_model("translation")))
    loaded = local.model_for("translation", None)
    assert loaded.chat._client()[0] is controller._client()[0]  # the same Llama, the same lock

    call = _call(tmp_path, "translation", text="Good morning, my friend.", tgt_lang="fr",
                                max_new_tokens=32)
    result = executor.run(call)
    assert result["text"].strip() and call.options["model"].endswith(".gguf")
    qa = executor.run(_call(tmp_path, "question-answering", question="How many kilometres of lanes?",
                            context=PARAGRAPH, max_new_tokens=24))
    assert set(qa) == {"text", "data"} and qa["data"]["answer"] == qa["text"] and qa["text"]
    if "start" in qa["data"]:
        assert PARAGRAPH[qa["data"]["start"]:qa["data"]["end"]].lower() == qa["text"].lower()
    generated = executor.run(_call(tmp_path, "text-generation", text="Write one sentence about the sea.",
                                   max_new_tokens=24))
    assert generated["text"].strip()


def test_zero_shot_prompt_lists_the_labels_once_and_refuses_none(tmp_path):
    call = _call(tmp_path, "zero-shot-classification", text="Great match!", candidate_labels=["sports", " sports", "art"])
    (system, instructions), (human, text) = gguf_text.messages(call)
    assert system == "system" and "label" in instructions and human == "human"
    assert text == "Labels:\n- sports\n- art\n\nText: Great match!"
    with pytest.raises(Exception, match="candidate_labels is empty"):
        gguf_text.messages(_call(tmp_path, "zero-shot-classification", text="x", candidate_labels=[" "]))


@pytest.mark.slow
def test_zero_shot_classification_scores_every_label_on_the_controller_model(tmp_path):
    from pathlib import Path

    from pydantic import BaseModel

    model = gguf_text.load(Path(gguf_or_skip("qwen2.5-coder-1.5b")))
    topics = ["politics", "sports", "cooking", "technology"]
    cases = {"Preheat the oven and whisk two eggs with sugar.": "cooking",
             "The new phone has a faster chip and a better camera.": "technology",
             "I loved this film, the acting was wonderful.": "positive"}
    for text, expected in cases.items():
        labels = ["negative", "positive"] if expected == "positive" else topics
        result = gguf_text.infer(model, _call(tmp_path, "zero-shot-classification", text=text, candidate_labels=labels))
        rows = result["data"]
        assert sorted(row["label"] for row in rows) == sorted(labels)
        assert abs(sum(row["score"] for row in rows) - 1) < 1e-6
        assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)
        assert rows[0]["label"] == expected and rows[0]["score"] > 0.5, rows
        assert result["text"].startswith(expected)

    class Answer(BaseModel):
        city: str

    # Scoring moved the shared context: the next completion on the same Llama still reads its own prompt.
    after = model.chat.with_structured_output(Answer).invoke("What is the capital of France? Answer with the city.")
    assert "paris" in after.city.lower()
