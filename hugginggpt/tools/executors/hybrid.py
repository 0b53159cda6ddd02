"""Choose where each task runs: on this machine when the model is here, remotely otherwise.

Local first avoids network cost and rate limits for models the user already has; remote covers the
rest, so a missing local model never becomes "no available models" (a known failure of the
reference HuggingGPT). When a call names no model, the catalog's candidates (ranked by downloads)
are tried: the first one available locally, else the most downloaded one, remotely.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.remote import RemoteExecutor

if TYPE_CHECKING:
    from hugginggpt.tools.catalog import ModelCatalog

logger = logging.getLogger(__name__)

POLICIES = ("local", "remote", "hybrid")
CANDIDATES_TO_TRY = 50


class HybridExecutor(Executor):
    """Routes each call to ``local`` or ``remote`` by ``policy`` (``local`` | ``remote`` | ``hybrid``).

    Which backend ran a call, and on which model, is written into ``call.options["backend"]``
    (``"local"``/``"remote"``) and ``call.options["model"]``; ``last_backend`` holds the same for
    the current thread. The result envelope itself is left unchanged. ``notes`` lists degradations
    (e.g. local execution unavailable) for the CLI to show.
    """

    name = "hybrid"

    def __init__(self, local: Executor | None = None, remote: Executor | None = None, *,
                 catalog: "ModelCatalog | None" = None, policy: str = "hybrid"):
        if policy not in POLICIES:
            raise ValueError(f"unknown execution policy {policy!r}; use one of {', '.join(POLICIES)}")
        if policy == "local" and local is None:
            raise ValueError("policy 'local' needs a local executor")
        if policy == "remote" and remote is None:
            raise ValueError("policy 'remote' needs a remote executor")
        if local is None and remote is None:
            raise ValueError("a hybrid executor needs a local or a remote executor")
        self.local = local
        self.remote = remote
        self.catalog = catalog
        self.policy = policy
        self.notes: list[str] = []
        self._thread = threading.local()

    def __repr__(self) -> str:
        return f"HybridExecutor(policy={self.policy!r}, local={self.local!r}, remote={self.remote!r})"

    @property
    def backends(self) -> list[Executor]:
        """The executors the policy allows, in order of preference."""
        allowed = {"local": [self.local], "remote": [self.remote], "hybrid": [self.local, self.remote]}[self.policy]
        return [backend for backend in allowed if backend is not None]

    @property
    def last_backend(self) -> str | None:
        """Name of the backend of this thread's latest call (``call.options`` works across threads)."""
        return getattr(self._thread, "backend", None)

    def can_run(self, task: str, model: str | None) -> bool:
        try:
            self.route(task, model)
        except ModelLoadError:
            return False
        return True

    def route(self, task: str, model: str | None) -> tuple[Executor, str | None]:
        """The backend and model a call of ``task`` on ``model`` (None: pick from the catalog) would use."""
        if model is None:
            model = self.pick_model(task)
        for backend in self.backends:
            if backend.can_run(task, model):
                return backend, model
        raise ModelLoadError(task, self._no_backend_cause(model))

    def pick_model(self, task: str) -> str | None:
        """The first catalog candidate available locally (unless remote-only), else the most downloaded one."""
        if self.catalog is None:
            return None
        candidates = self.catalog.candidates(task, k=CANDIDATES_TO_TRY)
        if self.local is not None and self.policy != "remote":
            for card in candidates:
                if self.local.can_run(task, card.id):
                    return card.id
        if self.remote is not None and self.policy != "local":
            for card in candidates:
                if self.remote.can_run(task, card.id):
                    return card.id
        return None

    def run(self, call: TaskCall) -> dict[str, Any]:
        backend, model = self.route(call.task.name, call.model)
        call.options["backend"] = backend.name
        call.options["model"] = model
        self._thread.backend = backend.name
        return backend.run(replace(call, model=model))

    def _no_backend_cause(self, model: str | None) -> str:
        what = f"model {model!r}" if model else "no model was given and the catalog has none that"
        if self.policy == "local":
            return f"{what} cannot run locally (execution policy 'local'); register a local folder or allow remote"
        if self.policy == "remote":
            return f"{what} cannot run on the remote endpoint (execution policy 'remote')"
        return f"{what} can run neither locally nor remotely"


def default_executor(catalog: "ModelCatalog | None" = None, policy: str | None = None) -> HybridExecutor:
    """The executor configured by the environment.

    ``HUGGINGGPT_EXECUTION``: policy (``hybrid`` default). ``HUGGINGGPT_ENDPOINT``: URL of an Inference
    Endpoint or TGI/TEI server, else Inference Providers chosen by ``HUGGINGGPT_PROVIDER`` (``auto``).
    The token is huggingface_hub's (``HF_TOKEN`` or a cached login). Without transformers/torch the
    hybrid policy degrades to remote only, with a note in ``executor.notes``.
    """
    from hugginggpt.tools.catalog import ModelCatalog

    policy = policy or os.environ.get("HUGGINGGPT_EXECUTION") or "hybrid"
    if policy not in POLICIES:
        raise ValueError(f"unknown execution policy {policy!r} (HUGGINGGPT_EXECUTION); use one of {', '.join(POLICIES)}")
    catalog = catalog if catalog is not None else ModelCatalog()
    endpoint = os.environ.get("HUGGINGGPT_ENDPOINT") or None
    provider = None if endpoint else os.environ.get("HUGGINGGPT_PROVIDER") or "auto"
    remote = RemoteExecutor(endpoint, provider=provider)
    # The local policy fetches Hub models on first use (nothing else could run them); hybrid does not,
    # since remote inference covers what is not on disk. HUGGINGGPT_DOWNLOAD_MODELS=1/0 overrides.
    download = os.environ.get("HUGGINGGPT_DOWNLOAD_MODELS", "1" if policy == "local" else "0") not in ("0", "", "false")
    local, note = _local_executor(catalog, download) if policy != "remote" else (None, None)
    if local is None and policy == "local":
        raise ModelLoadError(None, note or "local execution is unavailable")
    executor = HybridExecutor(local, remote, catalog=catalog, policy=policy)
    if note:
        logger.warning(note)
        executor.notes.append(note)
    return executor


def _local_executor(catalog: "ModelCatalog", download: bool = False) -> tuple[Executor | None, str | None]:
    """A LocalExecutor, or None and why (missing transformers/torch)."""
    missing = [name for name in ("transformers", "torch") if importlib.util.find_spec(name) is None]
    if missing:
        return None, (f"local execution unavailable ({' and '.join(missing)} not installed: "
                      "pip install 'hugginggpt[local]'); running every task remotely")
    try:
        from hugginggpt.tools.executors.local import LocalExecutor
    except ImportError as exc:
        return None, f"local execution unavailable ({exc}); running every task remotely"
    return LocalExecutor(catalog=catalog, download=download), None
