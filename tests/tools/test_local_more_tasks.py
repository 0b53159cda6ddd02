"""The rarer tasks on their tiny models: text-ranking, keypoints, voice activity, video, forecasting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from hugginggpt.errors import ModelLoadError, ResourceError, TaskError
from hugginggpt.tools.executors.base import TaskCall
from hugginggpt.tools.executors.local import LocalExecutor
from hugginggpt.tools.executors.local_tasks.video_frames import (
    read_frames,
    sample_indices,
)
from hugginggpt.tools.executors.local_tasks.voice_activity import (
    speech_probabilities,
    speech_spans,
)
from hugginggpt.tools.resources import Workspace, save_video
from hugginggpt.tools.table import get_task
from tests.tiny_models import tiny_model_path

sf = pytest.importorskip("soundfile")
pytest.importorskip("torch")

NEW_TASKS = ["text-ranking", "keypoint-detection", "voice-activity-detection", "video-classification",
             "time-series-forecasting", "video-text-to-text"]


@pytest.fixture(scope="module")
def executor(device) -> LocalExecutor:
    return LocalExecutor(max_models=2, device=device)


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(root=tmp_path / "run")


def run(executor, workspace, task, model=None, **args) -> dict:
    call = TaskCall(task=get_task(task), args=args, workspace=workspace,
                    model=str(model or tiny_model_path(task)))
    return executor.run(call)


def noise_image(path, size=(56, 40), seed=0) -> str:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(path)
    return str(path)


@pytest.fixture
def gif(tmp_path) -> str:
    """A 6-frame animated GIF whose frames are solid greys 0, 50, ..., 250 (so sampling is checkable)."""
    ws = Workspace(root=tmp_path / "inputs")
    frames = [np.full((40, 56, 3), 50 * i, dtype=np.uint8) for i in range(6)]
    return save_video(frames, fps=5, ws=ws)


def test_every_new_task_has_a_local_handler():
    assert set(NEW_TASKS) <= set(LocalExecutor.tasks())


# ---------------------------------------------------------------------------- text-ranking


def test_text_ranking_scores_every_text_best_first(executor, workspace):
    texts = ["the cat is on the table", "paris is the capital of france", "a red car", "hello world"]
    result = run(executor, workspace, "text-ranking", query="what is the capital of france", texts=texts)
    rows = result["data"]
    assert sorted(row["text"] for row in rows) == sorted(texts)
    scores = [row["score"] for row in rows]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    assert result["text"] == rows[0]["text"]


def test_text_ranking_score_does_not_depend_on_the_batch(executor, workspace):
    """Padding to the longest text must not change a pair's score."""
    query = "what is the capital of france"
    alone = run(executor, workspace, "text-ranking", query=query, texts=["a red car"])["data"][0]["score"]
    mixed = run(executor, workspace, "text-ranking", query=query,
                texts=["a red car", "the big dog is running in the green grass with a child"])["data"]
    assert next(r["score"] for r in mixed if r["text"] == "a red car") == pytest.approx(alone, abs=1e-5)


def test_text_ranking_without_texts_is_a_task_error(executor, workspace):
    with pytest.raises(TaskError, match="text-ranking: missing required argument 'texts'"):
        run(executor, workspace, "text-ranking", query="anything", texts=[])


# ---------------------------------------------------------------------------- keypoint-detection


def test_keypoints_lie_in_the_image_and_are_drawn(executor, workspace, tmp_path):
    image = noise_image(tmp_path / "photo.png")
    result = run(executor, workspace, "keypoint-detection", image=image, top_k=7)
    points = result["data"]
    assert 1 <= len(points) <= 7
    assert all(0 <= p["x"] < 56 and 0 <= p["y"] < 40 and isinstance(p["score"], float) for p in points)
    assert [p["score"] for p in points] == sorted((p["score"] for p in points), reverse=True)
    assert workspace.is_allowed(result["image"])
    with Image.open(result["image"]) as drawn:
        assert drawn.format == "PNG" and drawn.size == (56, 40)
        assert np.asarray(drawn.convert("RGB")).tolist() != np.asarray(Image.open(image)).tolist()


def test_keypoints_of_a_non_image_are_a_resource_error(executor, workspace, tmp_path):
    fake = tmp_path / "fake.png"
    fake.write_text("not an image")
    with pytest.raises(ResourceError) as info:
        run(executor, workspace, "keypoint-detection", image=str(fake))
    assert info.value.task == "keypoint-detection"


# ---------------------------------------------------------------------------- voice-activity-detection


def test_speech_spans_merge_runs_of_frames():
    probs = np.array([0.1, 0.9, 0.8, 0.2, 0.7, 0.1, 0.1, 0.1, 0.95])
    assert speech_spans(probs, 0.5) == [{"start": 0.5, "end": 1.5}, {"start": 2.0, "end": 2.5},
                                        {"start": 4.0, "end": 4.5}]
    assert speech_spans(probs, 0.5, min_gap=0.5) == [{"start": 0.5, "end": 2.5}, {"start": 4.0, "end": 4.5}]
    assert speech_spans(np.zeros(4), 0.5) == []


def test_speech_probability_reads_the_speech_label_or_any_speaker():
    logits = np.array([[2.0, 0.0], [0.0, 2.0]])
    speech_second = speech_probabilities(logits, {0: "non-speech", 1: "speech"})
    assert speech_second[0] < 0.5 < speech_second[1]
    speakers = speech_probabilities(np.array([[-5.0, -5.0], [-5.0, 3.0]]), {0: "SPEAKER_00", 1: "SPEAKER_01"})
    assert speakers[0] < 0.5 < speakers[1]


def test_voice_activity_spans_cover_the_clip(executor, workspace, tmp_path):
    """The tiny model is biased to "speech": one span from the start to the end of the 1.5 s clip."""
    path = tmp_path / "clip.wav"
    sf.write(path, (np.random.default_rng(0).standard_normal(33075) * 0.1).astype(np.float32), 22050)
    result = run(executor, workspace, "voice-activity-detection", audio=str(path))
    assert len(result["data"]) == 1
    span = result["data"][0]
    assert span["start"] == 0.0 and span["end"] == pytest.approx(1.5, abs=0.01)
    assert "1 span" in result["text"]
    none = run(executor, workspace, "voice-activity-detection", audio=str(path), threshold=0.99)
    assert none["data"] == [] and none["text"].startswith("no speech")


def test_voice_activity_of_a_non_audio_file_is_a_resource_error(executor, workspace, tmp_path):
    fake = tmp_path / "fake.wav"
    fake.write_bytes(b"RIFF but not really")
    with pytest.raises(ResourceError) as info:
        run(executor, workspace, "voice-activity-detection", audio=str(fake))
    assert info.value.task == "voice-activity-detection"


# ---------------------------------------------------------------------------- video


def test_frames_are_sampled_evenly(gif):
    assert sample_indices(6, 3) == [0, 2, 5]
    assert sample_indices(2, 4) == [0, 0, 1, 1]
    frames = read_frames(gif, 3)
    greys = [np.asarray(f)[0, 0, 0] for f in frames]
    assert len(frames) == 3 and greys[0] < greys[1] < greys[2]
    assert all(f.mode == "RGB" and f.size == (56, 40) for f in frames)


def test_video_classification_returns_top_k_labels(executor, workspace, gif):
    result = run(executor, workspace, "video-classification", video=gif, top_k=2)
    rows = result["data"]
    assert len(rows) == 2 and {r["label"] for r in rows} <= {"dancing", "running", "cooking"}
    assert rows[0]["score"] >= rows[1]["score"] and result["text"].startswith(rows[0]["label"])


def test_an_mp4_without_a_decoder_names_the_package(executor, workspace, tmp_path):
    if __import__("importlib").util.find_spec("av") is not None:
        pytest.skip("av is installed: MP4 files are decodable here")
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
    with pytest.raises(ResourceError, match="video-classification: .*needs the 'av' package"):
        run(executor, workspace, "video-classification", video=str(clip))


def test_video_chat_sees_the_sampled_frames(executor, workspace, gif):
    result = run(executor, workspace, "video-text-to-text", video=gif, text="what is the man doing",
                 num_frames=3, max_new_tokens=4)
    assert isinstance(result["text"], str) and result["text"]


def test_video_chat_on_a_non_vlm_folder_is_a_load_error(executor, workspace, gif):
    with pytest.raises(ModelLoadError, match="video-text-to-text: cannot load the model"):
        run(executor, workspace, "video-text-to-text", model=tiny_model_path("time-series-forecasting"),
            video=gif, text="what happens")


# ---------------------------------------------------------------------------- time-series-forecasting


def test_forecast_each_numeric_column_for_the_horizon(executor, workspace):
    """12 steps from a model whose own horizon is 8: the rest comes from feeding forecasts back."""
    table = {"date": [f"2024-01-{d:02d}" for d in range(1, 21)],
             "sales": [str(10 + i % 5) for i in range(20)], "visits": [str(100.0 + i) for i in range(20)]}
    result = run(executor, workspace, "time-series-forecasting", table=table, prediction_length=12)
    assert set(result["data"]) == {"sales", "visits"}  # the date column is a timestamp, not a series
    assert all(len(v) == 12 and all(math.isfinite(x) for x in v) for v in result["data"].values())
    assert "sales: next 12 values" in result["text"]


def test_forecast_reads_a_csv_history(executor, workspace):
    path = workspace.new_path("table")
    path.write_text("y\n" + "\n".join(str(i % 7) for i in range(40)) + "\n")
    result = run(executor, workspace, "time-series-forecasting", table=str(path), prediction_length=3)
    assert list(result["data"]) == ["y"] and len(result["data"]["y"]) == 3


def test_forecast_of_a_text_table_is_a_task_error(executor, workspace):
    with pytest.raises(TaskError, match="time-series-forecasting: the table has no numeric column"):
        run(executor, workspace, "time-series-forecasting", table={"city": ["paris", "london"]})
