"""A small but real executor for tool tests: it computes its results from the inputs it gets.

It reads the resolved image files with PIL and writes real PNG and WAV files into the call's
workspace, so the tests exercise the whole path from tool arguments to a result envelope.
"""

from __future__ import annotations

import re
import wave
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.results import envelope
from tests.devices import available_devices

COLOURS = {"red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255), "black": (0, 0, 0)}


class ToyExecutor(Executor):
    """Deterministic stand-in models for a handful of tasks; records every call it runs."""

    name = "toy"
    tasks = ("text-classification", "question-answering", "image-classification",
             "object-detection", "text-to-speech", "text-to-image", "zero-shot-image-classification")

    def __init__(self) -> None:
        self.calls: list[TaskCall] = []

    def can_run(self, task: str, model: str | None) -> bool:
        return task in self.tasks and model != "missing/model"

    def run(self, call: TaskCall) -> dict[str, Any]:
        if not self.can_run(call.task.name, call.model):
            raise ModelLoadError(call.task.name, f"model {call.model!r} is not available")
        self.calls.append(call)
        return getattr(self, "_" + call.task.name.replace("-", "_"))(call)

    def _text_classification(self, call: TaskCall) -> dict[str, Any]:
        text = call.args["text"]
        label = "SHOUTING" if text.isupper() else "CALM"
        return envelope(text=label, data=[{"label": label, "score": 1.0}][: call.args["top_k"]])

    def _question_answering(self, call: TaskCall) -> dict[str, Any]:
        # The context sentence sharing the most words with the question.
        words = set(re.findall(r"\w+", call.args["question"].lower()))
        sentences = [s.strip() for s in call.args["context"].split(".") if s.strip()]
        best = max(sentences, key=lambda s: len(words & set(re.findall(r"\w+", s.lower()))))
        return envelope(text=best, data={"answer": best, "score": 1.0})

    def _image_classification(self, call: TaskCall) -> dict[str, Any]:
        with Image.open(call.args["image"]) as img:
            rgb = img.convert("RGB").resize((1, 1)).getpixel((0, 0))
        scores = {name: 1.0 / (1.0 + sum(abs(a - b) for a, b in zip(rgb, ref))) for name, ref in COLOURS.items()}
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])[: call.args["top_k"]]
        return envelope(text=ranked[0][0], data=[{"label": k, "score": v} for k, v in ranked])

    def _zero_shot_image_classification(self, call: TaskCall) -> dict[str, Any]:
        top = self._image_classification(call)["text"]
        labels = call.args["candidate_labels"]
        chosen = top if top in labels else labels[0]
        return envelope(text=chosen, data=[{"label": chosen, "score": 1.0}])

    def _object_detection(self, call: TaskCall) -> dict[str, Any]:
        with Image.open(call.args["image"]) as img:
            img = img.convert("RGB")
        box = img.point(lambda v: 255 if v > 0 else 0).getbbox()
        boxes = [] if box is None else [{"label": "thing", "score": 1.0,
                                         "box": dict(zip(("xmin", "ymin", "xmax", "ymax"), box))}]
        drawn = call.workspace.new_path("image")
        if box is not None:
            ImageDraw.Draw(img).rectangle(box, outline=(255, 255, 0))
        img.save(drawn)
        return envelope(text=f"{len(boxes)} object(s)", image=drawn, data=boxes)

    def _text_to_speech(self, call: TaskCall) -> dict[str, Any]:
        path = call.workspace.new_path("audio")
        frames = 160 * len(call.args["text"])  # 10 ms of silence per character at 16 kHz
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(16000)
            out.writeframes(b"\x00\x00" * frames)
        return envelope(audio=path)

    def _text_to_image(self, call: TaskCall) -> dict[str, Any]:
        colour = next((c for c in COLOURS if c in call.args["text"].lower()), "black")
        path = call.workspace.new_path("image")
        Image.new("RGB", (8, 8), COLOURS[colour]).save(path)
        return envelope(image=path)


def write_png(path: Path, colour: str = "red", size: tuple[int, int] = (16, 16),
              box: tuple[int, int, int, int] | None = None) -> Path:
    """A real PNG: a solid colour, or a black image with a coloured rectangle at ``box``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if box is None:
        img = Image.new("RGB", size, COLOURS[colour])
    else:
        img = Image.new("RGB", size, (0, 0, 0))
        ImageDraw.Draw(img).rectangle(box, fill=COLOURS[colour])
    img.save(path)
    return path


@pytest.fixture
def toy_executor() -> ToyExecutor:
    return ToyExecutor()


@pytest.fixture
def run_workspace(tmp_path):
    from hugginggpt.tools.resources import Workspace

    return Workspace(root=tmp_path / "run")


@pytest.fixture(scope="module", params=available_devices())
def device(request) -> str:
    """Each device a local model can run on here: ``cpu``, and ``cuda`` where torch sees a GPU."""
    return request.param
