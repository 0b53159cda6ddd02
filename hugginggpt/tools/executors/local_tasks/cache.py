"""A bounded LRU cache of loaded models: one load per model even when threads ask at the same time.

Loading every model up front blew up memory in the reference implementation (JARVIS #149); here a
model is loaded on first use, the least recently used one is dropped past ``max_models``, two requests
for one model load it once, and loads take turns process-wide (``LOADING``) while inference on loaded
models runs in parallel.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


# transformers and diffusers build a model under process-wide patches (meta-device construction,
# skipped weight init), so two loads at once in one process can leave one model's weights on the
# meta device ("Cannot copy out of meta tensor"). Loads take turns; inference stays parallel.
# Reentrant: a loader may load a model it builds on (normal-control loads a depth model).
LOADING = threading.RLock()

class ModelCache:
    """Thread-safe LRU of loaded models keyed by (loader, folder, ...)."""

    def __init__(self, max_models: int = 4):
        if max_models < 1:
            raise ValueError("max_models must be at least 1")
        self.max_models = max_models
        self.load_count = 0
        self._models: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}

    def loaded_keys(self) -> list[Hashable]:
        """Cached keys, least recently used first."""
        with self._lock:
            return list(self._models)

    def _lookup(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key in self._models:
                self._models.move_to_end(key)
                return True, self._models[key]
            return False, None

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        """The cached model for ``key``, calling ``load()`` (once, whatever the threads) when absent."""
        found, model = self._lookup(key)
        if found:
            return model
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            found, model = self._lookup(key)
            if found:
                return model
            with LOADING:  # one load at a time in the process (see LOADING); calls on loaded models go on
                model = load()
            with self._lock:
                self.load_count += 1
                self._models[key] = model
                evicted = []
                while len(self._models) > self.max_models:
                    evicted.append(self._models.popitem(last=False)[1])
        if evicted:
            del evicted
            _free_memory()
        return model

    def clear(self) -> None:
        with self._lock:
            self._models.clear()
        _free_memory()


def _free_memory() -> None:
    """Return dropped models' memory now (and the GPU's cached blocks) instead of at some later GC."""
    gc.collect()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
