"""Loading a transformers ``AutoModelFor...`` class with its processor, for tasks no pipeline covers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.tools.executors.local_tasks.common import LoadOptions


@dataclass
class LoadedModel:
    """A model in eval mode with what prepares its inputs (tokenizer, image or feature processor)."""

    model: Any
    processor: Any
    device: str

    def to_device(self, inputs: Any) -> Any:
        """Processor outputs moved to the model's device, floating tensors cast to the model's dtype."""
        moved = {}
        for key, value in inputs.items():
            if hasattr(value, "to"):
                value = value.to(self.device)
                if value.is_floating_point():
                    value = value.to(self.model.dtype)
            moved[key] = value
        return moved


def auto_loader(model_class: str, processor_class: str | None) -> Callable[[Path, LoadOptions], LoadedModel]:
    """A loader of ``transformers.<model_class>`` (and ``<processor_class>``) from a local folder."""

    def load(folder: Path, options: LoadOptions) -> LoadedModel:
        import transformers

        model = getattr(transformers, model_class).from_pretrained(folder, dtype=options.dtype)
        processor = getattr(transformers, processor_class).from_pretrained(folder) if processor_class else None
        return LoadedModel(model.to(options.device).eval(), processor, options.device)

    load.__name__ = f"load_{model_class}"
    return load
