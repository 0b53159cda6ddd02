"""time-series-forecasting: PatchTST / PatchTSMixer forecasts of the numeric columns of a table.

The history is fitted to the model's context window (older values dropped, missing ones masked);
a horizon longer than the model's own is forecast by feeding forecasts back as history.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel
from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    required,
    task_name,
)
from hugginggpt.tools.resources.tables import read_table

#: model_type -> (model class, name of its observed-values mask argument)
FAMILIES = {
    "patchtst": ("PatchTSTForPrediction", "past_observed_mask"),
    "patchtsmixer": ("PatchTSMixerForPrediction", "observed_mask"),
}
MAX_HORIZON = 1000


def load_forecaster(folder: Path, options: LoadOptions) -> LoadedModel:
    import transformers

    model_type = transformers.AutoConfig.from_pretrained(folder).model_type
    if model_type not in FAMILIES:
        raise ValueError(f"unsupported forecasting architecture {model_type!r} (supported: {', '.join(FAMILIES)})")
    model = getattr(transformers, FAMILIES[model_type][0]).from_pretrained(folder, dtype=options.dtype)
    return LoadedModel(model.to(options.device).eval(), None, options.device)


# ------------------------------------------------------------------------------------ the history


def numeric_columns(call, table: Any) -> dict[str, list[float]]:
    """Columns whose cells are all numbers (blank cells become NaN); timestamp-like columns are skipped."""
    table = read_table(table, call.workspace, task_name(call))
    series: dict[str, list[float]] = {}
    for name, cells in table.items():
        cells = cells if isinstance(cells, list) else [cells]
        values = [_number(cell) for cell in cells]
        if cells and all(v is not None for v in values):
            series[str(name)] = [float(v) for v in values]
    if not series:
        raise TaskError(task_name(call), "the table has no numeric column to forecast")
    if any(sum(not math.isnan(v) for v in values) < 2 for values in series.values()):
        raise TaskError(task_name(call), "each series needs at least two known values")
    return series


def _number(cell: Any) -> float | None:
    """A float, NaN for a blank cell, None for text (a timestamp or a label)."""
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return math.nan
    if isinstance(cell, bool):
        return None
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else math.nan


# ------------------------------------------------------------------------------------ forecasting


def fit_context(values: np.ndarray, context_length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(series, observed)`` of exactly ``context_length`` rows: the latest history, NaNs and padding masked."""
    values = values[-context_length:]
    padded = np.full((context_length, values.shape[1]), np.nan, dtype=np.float32)
    padded[context_length - len(values):] = values
    observed = ~np.isnan(padded)
    return np.nan_to_num(padded, nan=0.0), observed.astype(np.float32)


def forecast(loaded: LoadedModel, history: np.ndarray, horizon: int) -> np.ndarray:
    """``(horizon, channels)`` forecasts of a ``(time, channels)`` history."""
    import torch

    config = loaded.model.config
    mask_name = FAMILIES[config.model_type][1]
    steps: list[np.ndarray] = []
    while sum(len(s) for s in steps) < horizon:
        series, observed = fit_context(history, config.context_length)
        inputs = {"past_values": torch.from_numpy(series)[None], mask_name: torch.from_numpy(observed)[None]}
        with torch.inference_mode():
            if getattr(config, "loss", "mse") == "nll":  # a distribution head: the mean of sampled paths
                step = loaded.model.generate(**loaded.to_device(inputs)).sequences.mean(dim=1)[0]
            else:
                step = loaded.model(**loaded.to_device(inputs)).prediction_outputs[0]
        step = step.float().cpu().numpy()
        steps.append(step)
        history = np.concatenate([history, step])
    return np.concatenate(steps)[:horizon]


def time_series_forecasting(loaded: LoadedModel, call) -> dict[str, Any]:
    task = task_name(call)
    series = numeric_columns(call, required(call, "table"))
    horizon = int(arg(call, "prediction_length", loaded.model.config.prediction_length))
    if not 1 <= horizon <= MAX_HORIZON:
        raise TaskError(task, f"prediction_length must be between 1 and {MAX_HORIZON}, got {horizon}")
    channels = loaded.model.config.num_input_channels
    names = list(series)
    if len({len(v) for v in series.values()}) > 1:
        raise TaskError(task, "the table's columns have different lengths")
    history = np.array([series[name] for name in names], dtype=np.float32).T  # (time, columns)
    if channels == len(names):
        predicted = forecast(loaded, history, horizon)
    elif channels == 1:  # a univariate model: each column on its own
        predicted = np.concatenate([forecast(loaded, history[:, [i]], horizon) for i in range(len(names))], axis=1)
    else:
        raise TaskError(task, f"the model forecasts {channels} series together, the table has {len(names)}: "
                              f"{', '.join(names)}")
    data = {name: [round(float(v), 6) for v in predicted[:, i]] for i, name in enumerate(names)}
    text = "; ".join(f"{name}: next {horizon} values from {values[0]:.4g} to {values[-1]:.4g}"
                     for name, values in data.items())
    return {"text": text, "data": data}


HANDLERS = {
    "time-series-forecasting": TaskHandler("time-series-forecasting", load_forecaster, time_series_forecasting),
}
