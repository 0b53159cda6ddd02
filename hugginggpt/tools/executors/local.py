"""LocalExecutor: runs task models on this machine with transformers (and diffusers when installed).

A model is a local folder, a Hub id the catalog maps to a folder, or a Hub id already in the Hugging
Face cache. By default nothing is downloaded: a model that is not on disk is reported with
``can_run`` False, so the hybrid executor sends the call to the remote executor instead. With
``download=True`` (the ``local`` policy) a Hub model is fetched into the HF cache on first use, as
HuggingGPT's local deployment does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from hugginggpt.errors import ModelLoadError, TaskError, error_line
from hugginggpt.paths import expand_home
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.hub_snapshots import cached_snapshot, download_snapshot, hub_offline, is_hub_id
from hugginggpt.tools.executors.local_tasks import (
    HANDLERS,
    LoadOptions,
    TaskHandler,
    handler_for,
)
from hugginggpt.tools.executors.local_tasks import gguf_text
from hugginggpt.tools.executors.local_tasks.cache import ModelCache
from hugginggpt.tools.executors.local_tasks.common import missing_extra_error, task_name

CANDIDATES_TO_TRY = 20


class Catalog(Protocol):
    """What the executor needs from a model catalog (``hugginggpt.tools.catalog.ModelCatalog``)."""

    def local_path(self, model_id: str) -> Path | None: ...

    def candidates(self, task: str, k: int = 5) -> list[Any]: ...


def default_device() -> str:
    """``cuda`` when a GPU is usable, else ``cpu``."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


class LocalExecutor(Executor):
    """Runs tasks on local models, keeping at most ``max_models`` of them loaded (LRU)."""

    name = "local"

    def __init__(self, catalog: Catalog | None = None, *, max_models: int = 4, device: str | None = None,
                 dtype: Any = "auto", download: bool = False):
        self.catalog = catalog
        self.download = download
        self.options = LoadOptions(device=device or default_device(), dtype=dtype, download=download)
        self._cache = ModelCache(max_models)

    # ------------------------------------------------------------------ what can run here

    @staticmethod
    def tasks() -> list[str]:
        """Tasks with a local handler (whether or not a model for them is on disk)."""
        return sorted(HANDLERS)

    def can_run(self, task: str, model: str | None) -> bool:
        handler = handler_for(task)
        if handler is None or handler.missing_requirement():
            return False
        if not handler.weights:
            return True
        if self.resolve(task, model) is not None:
            return True
        return self.download and self._downloadable(task, model) is not None

    def why_not(self, task: str, model: str | None) -> str:
        """Why ``can_run`` is False: no local implementation, a missing extra (what to install), or no
        model on disk (how to give one); "" when it can run."""
        handler = handler_for(task)
        if handler is None:
            return "it has no local implementation"
        missing = handler.missing_requirement()
        if missing:
            return f"the {missing!r} package is not installed (pip install 'hugginggpt[{handler.extra}]')"
        if self.can_run(task, model):
            return ""
        what = "it is not" if model else "no model for it is"
        if self.download and hub_offline():
            return f"{what} on this machine, and HF_HUB_OFFLINE=1 forbids downloading one"
        return (f"{what} on this machine (give a folder with --local-model {task}=DIR, or let "
                "--execution local download it)")

    def _downloadable(self, task: str, model: str | None) -> str | None:
        """The Hub id a download would fetch for ``model`` (the top catalog candidate when None);
        None in the Hub's offline mode (``HF_HUB_OFFLINE=1``): nothing can be fetched."""
        if hub_offline():
            return None
        if model is None:
            cards = self.catalog.candidates(task, k=1) if self.catalog is not None else []
            return cards[0].id if cards else None
        return model if is_hub_id(model) and not expand_home(model).exists() else None

    def resolve(self, task: str, model: str | None) -> Path | None:
        """The local folder of ``model`` (or of the catalog's first local candidate when None)."""
        if model is None:
            return self._default_folder(task)
        gguf = gguf_text.model_file(task, model, self.catalog)  # a GGUF file for a text task
        if gguf is not None:
            return gguf
        folder = expand_home(model)
        if folder.is_dir():
            return folder.resolve()
        if self.catalog is not None:
            mapped = self.catalog.local_path(model)
            if mapped is not None and Path(mapped).is_dir():
                return Path(mapped)
        return cached_snapshot(model)

    def _default_folder(self, task: str) -> Path | None:
        if self.catalog is None:
            return None
        for card in self.catalog.candidates(task, k=CANDIDATES_TO_TRY):
            folder = getattr(card, "local_path", None)
            if folder and Path(folder).is_dir():
                return Path(folder)
            folder = self.resolve(task, card.id)
            if folder is not None:
                return folder
        return None

    # ------------------------------------------------------------------ the model cache

    @property
    def load_count(self) -> int:
        """How many models were loaded so far (cache hits do not count)."""
        return self._cache.load_count

    def loaded_models(self) -> list[str]:
        """Folders of the loaded models, least recently used first (weightless tools such as Canny have none)."""
        return [str(folder) for _, folder in self._cache.loaded_keys() if folder is not None]

    def model_for(self, task: str, model: str | None) -> Any:
        """The loaded model object that runs ``task`` (loading it once); ``ModelLoadError`` otherwise."""
        return self._loaded(task, model)[1]

    def _loaded(self, task: str, model: str | None) -> tuple[TaskHandler, Any]:
        handler = self._handler(task)
        if not handler.weights:
            return handler, self._cache.get((handler.loader_key, None), lambda: self._load(task, handler, None))
        folder = self.resolve(task, model)
        if folder is None and self.download and (hub_id := self._downloadable(task, model)):
            try:
                folder = gguf_text.download_file(task, hub_id, self.catalog) or download_snapshot(hub_id)
            except Exception as exc:
                raise ModelLoadError(task, f"cannot download {hub_id} from the Hub: {error_line(exc)}") from exc
        if folder is None:
            raise ModelLoadError(task, _not_local_cause(task, model))
        key = (handler.loader_key, str(folder))
        return handler, self._cache.get(key, lambda: self._load(task, handler, folder))

    def _handler(self, task: str) -> TaskHandler:
        handler = handler_for(task)
        if handler is None:
            raise ModelLoadError(task, "this task has no local implementation; use the remote executor")
        missing = handler.missing_requirement()
        if missing:
            raise missing_extra_error(task, missing, handler.extra)
        return handler

    def _load(self, task: str, handler: TaskHandler, folder: Path | None) -> Any:
        try:
            return handler.load(folder, self.options)
        except ModelLoadError as exc:  # a loader's own clear cause (e.g. a missing base model): name the task
            if exc.task is None:
                raise ModelLoadError(task, exc.cause) from exc
            raise
        except Exception as exc:
            where = f"the model in {folder}" if folder is not None else handler.loader_key
            raise ModelLoadError(task, f"cannot load {where}: {error_line(exc)}") from exc

    # ------------------------------------------------------------------ running

    def run(self, call: TaskCall) -> dict[str, Any]:
        from hugginggpt.tools.results import check_envelope

        task = task_name(call)
        handler, model = self._loaded(task, call.model)
        try:
            result = handler.infer(model, call)
        except TaskError:
            raise
        except Exception as exc:
            raise TaskError(task, f"inference failed: {error_line(exc)}") from exc
        return check_envelope(result, task=task)


def _not_local_cause(task: str, model: str | None) -> str:
    if model is None:
        return f"no local model for task {task}; register a folder or use the remote executor"
    return (f"model {model!r} is not available locally (not a folder, not registered in the catalog, "
            "not in the Hugging Face cache); register a folder or use the remote executor")


__all__ = ["LocalExecutor", "cached_snapshot", "default_device"]
