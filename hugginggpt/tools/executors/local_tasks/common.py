"""What every local task handler shares: the handler record, load options, argument and output helpers."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggpt.errors import ModelLoadError, ResourceError, TaskError

if TYPE_CHECKING:
    from hugginggpt.tools.executors.base import TaskCall


@dataclass(frozen=True)
class LoadOptions:
    """Where and in which precision models are loaded (``dtype="auto"`` keeps the checkpoint's own)."""

    device: str = "cpu"
    dtype: Any = "auto"
    download: bool = False  # a loader may fetch what a model folder points to (a ControlNet's base pipeline)


@dataclass(frozen=True)
class TaskHandler:
    """How one task runs locally: ``load(folder, options)`` once (cached), then ``infer(model, call)``.

    Tasks whose ``loader_key`` is equal share one loaded model per folder (e.g. text-to-speech and
    text-to-audio both use the text-to-audio pipeline).
    """

    loader_key: str
    load: Callable[[Path, LoadOptions], Any]
    infer: Callable[[Any, TaskCall], dict[str, Any]]
    requires: tuple[str, ...] = ()  # importable modules; (module, extra) hint when missing
    extra: str = "local"
    #: False: the task reads no model files (OpenCV's Canny): ``load(None, options)``, whatever model is named.
    weights: bool = True

    def missing_requirement(self) -> str | None:
        """The first required module that is not installed, or None."""
        for module in self.requires:
            if importlib.util.find_spec(module) is None:
                return module
        return None


def task_name(call: TaskCall) -> str:
    task = call.task
    return task if isinstance(task, str) else task.name


def arg(call: TaskCall, name: str, default: Any = None) -> Any:
    """An argument of the call, else the task table's default, else ``default``."""
    value = call.args.get(name)
    if value is not None:
        return value
    spec_default = None
    if not isinstance(call.task, str):
        try:
            spec_default = call.task.arg(name).default
        except KeyError:  # the table does not list this argument
            spec_default = None
    return default if spec_default is None else spec_default


def required(call: TaskCall, name: str) -> Any:
    """An argument the task cannot run without; a clear ``TaskError`` when it is missing."""
    value = call.args.get(name)
    if value is None or value == "" or value == []:
        raise TaskError(task_name(call), f"missing required argument {name!r}")
    return value


def as_list(value: Any) -> list[str]:
    """A list argument that an LLM may also have written as a comma-separated string."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(v) for v in value]


def open_image(call: TaskCall, name: str = "image"):
    from hugginggpt.tools.resources import load_image

    return named_errors(call, load_image, required(call, name))


def open_audio(call: TaskCall, sampling_rate: int | None, name: str = "audio"):
    from hugginggpt.tools.resources import load_audio

    return named_errors(call, load_audio, required(call, name), sampling_rate)


def named_errors(call: TaskCall, loader: Callable, *args: Any) -> Any:
    """Run a resource function, putting the task's name on its ``ResourceError``."""
    try:
        return loader(*args)
    except ResourceError as exc:
        if exc.task is None:
            raise ResourceError(task_name(call), exc.cause) from None
        raise


def jsonable(value: Any) -> Any:
    """Plain JSON data from pipeline outputs (numpy / torch scalars and arrays, tuples)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return jsonable(value.tolist())
    if isinstance(value, float):
        return float(value)
    return value


def scored_labels(items: Any) -> list[dict[str, Any]]:
    """``[{"label": str, "score": float}, ...]`` best first, from a pipeline's label output."""
    if isinstance(items, dict):
        items = [items]
    rows = [{"label": str(item["label"]), "score": float(item["score"])} for item in items]
    return sorted(rows, key=lambda row: row["score"], reverse=True)


def top_label_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no label"
    best = rows[0]
    return f"{best['label']} ({best['score']:.3f})"


def missing_extra_error(task: str, module: str, extra: str) -> ModelLoadError:
    return ModelLoadError(task, f"the {module!r} package is not installed; install hugginggpt[{extra}]")
