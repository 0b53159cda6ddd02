"""Every local task family on its tiny model: the envelope has the right kinds, files are real media."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.results import resource_value
from hugginggpt.tools.table import get_task
from tests.tiny_models import tiny_model_path

sf = pytest.importorskip("soundfile")
pytest.importorskip("torch")


@pytest.fixture(scope="module")
def executor(device) -> LocalExecutor:
    return LocalExecutor(max_models=4, device=device)


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(root=tmp_path / "run")


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("inputs") / "photo.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (40, 56, 3), dtype=np.uint8)).save(path)
    return str(path)


@pytest.fixture(scope="module")
def speech(tmp_path_factory) -> str:
    """One second of noise at 22.05 kHz: the executor must resample it to the model's 16 kHz."""
    path = tmp_path_factory.mktemp("inputs") / "speech.wav"
    rng = np.random.default_rng(0)
    sf.write(path, (rng.standard_normal(22050) * 0.1).astype(np.float32), 22050)
    return str(path)


def run(executor, workspace, task, **args) -> dict:
    call = TaskCall(task=get_task(task), args=args, workspace=workspace, model=str(tiny_model_path(task)))
    return executor.run(call)


def assert_scored_labels(result, allowed=None):
    rows = result["data"]
    assert rows and isinstance(result["text"], str)
    scores = [row["score"] for row in rows]
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    if allowed is not None:
        assert {row["label"] for row in rows} <= set(allowed)


def assert_png_in_workspace(path, workspace):
    assert workspace.is_allowed(path) and path.endswith(".png")
    with Image.open(path) as img:
        assert img.format == "PNG" and img.size[0] > 0


# ---------------------------------------------------------------------------- the demo pair first


def test_caption_then_read_it_aloud(executor, workspace, photo):
    """The end-to-end demo: describe an image, then speak the description."""
    caption = run(executor, workspace, "image-to-text", image=photo)
    assert isinstance(caption["text"], str) and caption["text"]
    spoken = run(executor, workspace, "text-to-speech", text=resource_value(caption, "text"))
    path = resource_value(spoken, "audio")
    assert workspace.is_allowed(path)
    info = sf.info(path)
    assert info.format == "WAV" and info.samplerate == 16000 and info.frames > 0


def test_text_to_audio_shares_the_speech_model(executor, workspace):
    before = executor.load_count
    run(executor, workspace, "text-to-speech", text="hello")
    result = run(executor, workspace, "text-to-audio", text="hello world")
    assert sf.info(result["audio"]).frames > 0
    assert executor.load_count - before <= 1  # same folder, same pipeline: at most one (re)load


# ---------------------------------------------------------------------------- text


def test_text_classification_top_k(executor, workspace):
    result = run(executor, workspace, "text-classification", text="a good dog", top_k=2)
    assert_scored_labels(result, {"NEGATIVE", "POSITIVE"})
    assert len(result["data"]) == 2


def test_token_classification_entities_point_into_the_text(executor, workspace):
    text = "the man in paris"
    result = run(executor, workspace, "token-classification", text=text)
    for entity in result["data"]:
        assert entity["entity_group"] in {"PER", "LOC"}
        assert text[entity["start"]:entity["end"]].strip() == entity["word"]


def test_question_answering_answer_is_a_span_of_the_context(executor, workspace):
    context = "the cat is sitting on the mat in paris"
    result = run(executor, workspace, "question-answering", question="where is the cat?",
                 context=context)
    data = result["data"]
    assert context[data["start"]:data["end"]] == data["answer"] == result["text"]
    assert 0.0 < data["score"] <= 1.0


def test_zero_shot_classification_scores_the_candidates(executor, workspace):
    result = run(executor, workspace, "zero-shot-classification", text="a dog in the park",
                 candidate_labels=["animal", "car", "weather"])
    assert_scored_labels(result, {"animal", "car", "weather"})
    assert len(result["data"]) == 3
    assert sum(row["score"] for row in result["data"]) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("text", ["the cat is <mask> the mat", "the cat is [MASK] the mat", "the cat is [mask] the mat"])
def test_fill_mask_accepts_the_marks_of_the_task_table(executor, workspace, text):
    result = run(executor, workspace, "fill-mask", text=text, top_k=3)
    assert len(result["data"]) == 3
    assert all(row["token_str"] in row["sequence"] for row in result["data"])


def test_feature_extraction_of_a_plain_encoder_is_the_mean_of_its_token_vectors(executor, workspace):
    from transformers import pipeline

    result = run(executor, workspace, "feature-extraction", text="hello world")
    tokens = np.asarray(pipeline("feature-extraction", model=str(tiny_model_path("feature-extraction")))("hello world")[0])
    assert tokens.shape == (4, 32)  # [CLS] hello world [SEP]: the model declares no pooling
    assert np.allclose(result["data"], tokens.mean(axis=0), atol=1e-3)


def test_sentence_similarity_scores_each_sentence(executor, workspace):
    result = run(executor, workspace, "sentence-similarity", source_sentence="a cat",
                 sentences=["a cat", "a red car", "the sky"])
    scores = result["data"]
    assert len(scores) == 3 and all(-1.0 <= s <= 1.0 + 1e-6 for s in scores)
    assert scores[0] == pytest.approx(1.0, abs=1e-5)  # identical sentence


def test_text_generation_and_conversational_return_text(executor, workspace):
    generated = run(executor, workspace, "text-generation", text="the cat", max_new_tokens=4)
    reply = run(executor, workspace, "conversational", text="hello", max_new_tokens=4)
    for result in (generated, reply):
        assert set(result) == {"text"} and isinstance(result["text"], str)
    assert len(generated["text"].split()) <= 4


@pytest.mark.parametrize("task", ["summarization", "translation", "text2text-generation"])
def test_seq2seq_tasks_generate_text(executor, workspace, task):
    args = {"text": "the cat sat on the mat", "max_new_tokens": 4}
    if task == "translation":
        args.update(src_lang="en", tgt_lang="fr")
    result = run(executor, workspace, task, **args)
    assert set(result) == {"text"} and isinstance(result["text"], str)


# ---------------------------------------------------------------------------- vision


def test_image_classification(executor, workspace, photo):
    result = run(executor, workspace, "image-classification", image=photo, top_k=2)
    assert_scored_labels(result, {"cat", "dog", "bird"})
    assert len(result["data"]) == 2


def test_object_detection_draws_its_boxes(executor, workspace, photo):
    result = run(executor, workspace, "object-detection", image=photo, threshold=0.0)
    assert result["data"], "threshold 0 keeps every detection token"
    for det in result["data"]:
        assert det["label"] in {"cat", "dog", "car"}
        assert set(det["box"]) == {"xmin", "ymin", "xmax", "ymax"}
    assert_png_in_workspace(result["image"], workspace)
    with Image.open(result["image"]) as drawn, Image.open(photo) as original:
        assert drawn.size == original.size


def test_image_segmentation_overlays_masks(executor, workspace, photo):
    result = run(executor, workspace, "image-segmentation", image=photo)
    assert {row["label"] for row in result["data"]} <= {"sky", "tree", "road"}
    assert sum(row["area"] for row in result["data"]) == pytest.approx(1.0, abs=0.01)
    assert_png_in_workspace(result["image"], workspace)


def test_depth_estimation_writes_a_depth_map(executor, workspace, photo):
    result = run(executor, workspace, "depth-estimation", image=photo)
    assert_png_in_workspace(result["image"], workspace)
    assert result["data"]["min"] <= result["data"]["max"]


def test_zero_shot_image_classification(executor, workspace, photo):
    result = run(executor, workspace, "zero-shot-image-classification", image=photo,
                 candidate_labels="a cat, a dog")  # an LLM may write the list as one string
    assert_scored_labels(result, {"a cat", "a dog"})


def test_image_feature_extraction(executor, workspace, photo):
    result = run(executor, workspace, "image-feature-extraction", image=photo)
    tokens = result["data"]
    assert len(tokens) == 1 + (32 // 8) ** 2  # [CLS] + 4x4 patches
    assert {len(t) for t in tokens} == {32}


# ---------------------------------------------------------------------------- audio


def test_speech_recognition_transcribes_to_characters(executor, workspace, speech):
    result = run(executor, workspace, "automatic-speech-recognition", audio=speech)
    assert isinstance(result["text"], str)
    assert set(result["text"].replace("<unk>", "")) <= set("abcdefghijklmnopqrstuvwxyz' ")


def test_audio_classification(executor, workspace, speech):
    result = run(executor, workspace, "audio-classification", audio=speech, top_k=3)
    assert_scored_labels(result, {"speech", "music", "noise"})


def test_an_image_given_to_an_audio_task_is_a_resource_error_naming_the_task(executor,
                                                                              workspace, photo):
    from hugginggpt.errors import ResourceError

    with pytest.raises(ResourceError) as err:
        run(executor, workspace, "automatic-speech-recognition", audio=photo)
    assert err.value.task == "automatic-speech-recognition"


# ---------------------------------------------------------------------------- multimodal and open vocabulary


def test_image_text_to_text_and_visual_question_answering(executor, workspace, photo):
    chat = run(executor, workspace, "image-text-to-text", image=photo, text="what is this?",
               max_new_tokens=3)
    answer = run(executor, workspace, "visual-question-answering", image=photo,
                 question="what colour is the sky?", max_new_tokens=3)
    assert set(chat) == {"text"} and isinstance(chat["text"], str)
    assert answer["data"] == {"answer": answer["text"]}


def test_zero_shot_object_detection_uses_the_candidate_labels(executor, workspace, photo):
    result = run(executor, workspace, "zero-shot-object-detection", image=photo,
                 candidate_labels=["cat", "dog"], threshold=0.0)
    assert result["data"] and {det["label"] for det in result["data"]} <= {"cat", "dog"}
    assert_png_in_workspace(result["image"], workspace)


def test_the_demo_pair_runs_on_the_executors_device(executor, workspace, photo):
    caption = run(executor, workspace, "image-to-text", image=photo)
    spoken = run(executor, workspace, "text-to-speech", text=caption["text"] or "hello")
    assert sf.info(spoken["audio"]).frames > 0
    for task in ("image-to-text", "text-to-speech"):  # captioner bundle and pipeline both expose .model
        model = executor.model_for(task, str(tiny_model_path(task))).model
        assert model.device.type == executor.options.device


@pytest.mark.parametrize("as_csv", [False, True])
def test_table_question_answering_takes_columns_or_a_csv_file(executor, workspace, tmp_path, as_csv):
    table = {"city": ["paris", "london"], "cars": ["3", "5"]}
    if as_csv:
        csv_file = tmp_path / "cities.csv"
        csv_file.write_text("city,cars\nparis,3\nlondon,5\n")
        table = str(workspace.allow(csv_file))
    result = run(executor, workspace, "table-question-answering", table=table,
                 question="which city has the most cars?")
    data = result["data"]
    assert isinstance(result["text"], str) and result["text"] == data["answer"]
    assert all(cell in {"paris", "london", "3", "5"} for cell in data["cells"])


def test_a_csv_table_outside_the_workspace_is_refused(executor, workspace, tmp_path):
    from hugginggpt.errors import ResourceError

    secret = tmp_path / "elsewhere.csv"
    secret.write_text("a,b\n1,2\n")
    with pytest.raises(ResourceError) as err:
        run(executor, workspace, "table-question-answering", table=str(secret), question="what is a?")
    assert err.value.task == "table-question-answering"


def test_text_to_speech_of_unpronounceable_text_is_a_clear_task_error(executor, workspace):
    with pytest.raises(TaskError, match="text-to-speech: the model cannot pronounce any character"):
        run(executor, workspace, "text-to-speech", text="!!! ???")
