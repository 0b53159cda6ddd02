"""Choose where each task runs: on this machine when the model is here, remotely otherwise.

Local first avoids network cost and rate limits for models the user already has; remote covers the
rest, so a missing local model never becomes "no available models" (a known failure of the
reference HuggingGPT). When a call names no model, the catalog's candidates (ranked by downloads)
are tried: the first one available locally, else the most downloaded one, remotely.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hugginggpt import config
from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.remote import RemoteExecutor

if TYPE_CHECKING:
    from hugginggpt.tools.catalog import ModelCatalog

logger = logging.getLogger(__name__)

POLICIES = ("local", "remote", "hybrid")
CANDIDATES_TO_TRY = 50
#: Models tried for one call when the chosen one cannot be loaded or downloaded (the first included).
MAX_ATTEMPTS = 3


class HybridExecutor(Executor):
    """Routes each call to ``local`` or ``remote`` by ``policy`` (``local`` | ``remote`` | ``hybrid``).

    Which backend ran a call, and on which model, is written into ``call.options["backend"]``
    (``"local"``/``"remote"``) and ``call.options["model"]``; the tools put them into the result
    (``ran``). The result envelope itself is left unchanged. ``notes`` lists degradations
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

    def __repr__(self) -> str:
        return f"HybridExecutor(policy={self.policy!r}, local={self.local!r}, remote={self.remote!r})"

    @property
    def backends(self) -> list[Executor]:
        """The executors the policy allows, in order of preference (offline: not a Hub-hosted remote)."""
        allowed = {"local": [self.local], "remote": [self.remote], "hybrid": [self.local, self.remote]}[self.policy]
        return [backend for backend in allowed if backend is not None and self._reachable(backend)]

    def _reachable(self, backend: Executor) -> bool:
        """Hugging Face's hosted inference needs the Hub: not in its offline mode (``HF_HUB_OFFLINE=1``).
        A configured endpoint (a self-hosted TGI/TEI, an Inference Endpoint URL) is still tried."""
        if backend is not self.remote or getattr(backend, "endpoint", None):
            return True
        from hugginggpt.tools.executors.hub_snapshots import hub_offline

        return not hub_offline()

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
        raise ModelLoadError(task, self._no_backend_cause(task, model))

    def pick_model(self, task: str) -> str | None:
        """The model the user named for the task, else the first catalog candidate on disk (unless
        remote-only), else the first one the policy can run (download or remote), most downloaded first."""
        if self.catalog is None:
            return None
        preferred = getattr(self.catalog, "preferred", None)
        named = preferred(task) if preferred is not None else None
        if named is not None:
            return named.id
        return self._first_runnable(task, skip=set())

    def _first_runnable(self, task: str, skip: set[str]) -> str | None:
        """The first catalog candidate (not in ``skip``) the policy can run: one on disk first, then
        one the local executor would download, then a remote one; most downloaded first in each."""
        if self.catalog is None:
            return None
        candidates = [card for card in self.catalog.candidates(task, k=CANDIDATES_TO_TRY) if card.id not in skip]
        backends = self.backends
        resolve = getattr(self.local, "resolve", None)
        if self.local in backends and resolve is not None:
            for card in candidates:
                if resolve(task, card.id) is not None and self.local.can_run(task, card.id):
                    return card.id
        for backend in backends:
            for card in candidates:
                if backend.can_run(task, card.id):
                    return card.id
        return None

    def run(self, call: TaskCall) -> dict[str, Any]:
        """Run ``call`` on its model; when that model cannot be loaded or downloaded, on the next
        runnable catalog candidate (local ones first), up to ``MAX_ATTEMPTS`` models. Each model
        given up is listed with its cause in ``call.options["fallbacks"]`` (the tool records it in
        the result, so the trace says why another model ran); a model the user named for the task
        (``catalog.preferred``) is never swapped for another."""
        task = call.task.name
        tried: list[dict[str, str]] = []
        model: str | None = call.model
        while True:
            try:
                backend, model = self.route(task, model)
                call.options["backend"] = backend.name
                call.options["model"] = model
                return backend.run(replace(call, model=model))
            except ModelLoadError as exc:
                tried.append({"model": model or "(default)", "error": exc.cause})
                call.options["fallbacks"] = tried
                following = None if self._named_by_user(task, model) else self._first_runnable(
                    task, skip={t["model"] for t in tried})
                if following is None or len(tried) >= MAX_ATTEMPTS:
                    if len(tried) == 1:
                        raise
                    raise ModelLoadError(task, "; ".join(f"{t['model']}: {t['error']}" for t in tried)) from exc
                logger.warning("%s: %s cannot run (%s); trying %s", task, model, exc.cause, following)
                model = following

    def _named_by_user(self, task: str, model: str | None) -> bool:
        preferred = getattr(self.catalog, "preferred", None)
        card = preferred(task) if preferred is not None and model else None
        return card is not None and card.id == model

    def _no_backend_cause(self, task: str, model: str | None) -> str:
        """Why no backend the policy allows can run ``task`` on ``model``: each one's reason, in words
        that say what to install (an extra) or configure (a model folder, an endpoint, the policy)."""
        local = remote = ""
        if self.policy != "remote":
            local = (self.local.why_not(task, model) if self.local is not None else local_unavailable(task)) \
                or "local execution is unavailable"
        if self.policy != "local":
            if self.remote is None:
                remote = "no remote executor is configured"
            elif not self._reachable(self.remote):
                remote = ("HF_HUB_OFFLINE=1 turns Hugging Face's hosted inference off (unset it, or give your own "
                          "server with --endpoint URL)")
            else:
                remote = self.remote.why_not(task, model) or "the remote endpoint cannot serve it"
        what = f"model {model!r} cannot run" if model else "no model can run it"
        if self.policy == "local":
            return f"{what} on this machine (execution policy 'local'): {local}"
        if self.policy == "remote":
            return f"{what} on the remote endpoint (execution policy 'remote'): {remote}"
        return f"{what} here: locally, {local}; remotely, {remote}"


def default_executor(catalog: "ModelCatalog | None" = None, policy: str | None = None,
                     endpoint: str | None = None) -> HybridExecutor:
    """The executor for ``policy`` (``local`` | ``remote`` | ``hybrid``) and remote ``endpoint``.

    ``endpoint``: URL of an Inference Endpoint or TGI/TEI server, else Inference Providers chosen by
    ``HUGGINGGPT_PROVIDER`` (``auto``). Left out, policy and endpoint come from ``HUGGINGGPT_EXECUTION``
    (``hybrid`` default) and ``HUGGINGGPT_ENDPOINT``. The token is huggingface_hub's (``HF_TOKEN`` or
    a cached login). Without transformers/torch the hybrid policy degrades to remote only, with a
    note in ``executor.notes``.
    """
    from hugginggpt.tools.catalog import ModelCatalog

    policy = policy or config.value("execution")
    if policy not in POLICIES:
        raise ValueError(f"unknown execution policy {policy!r} ({config.var('execution')}); use one of {', '.join(POLICIES)}")
    catalog = catalog if catalog is not None else ModelCatalog()
    endpoint = endpoint or config.env("endpoint") or None
    provider = None if endpoint else config.value("provider")
    remote = RemoteExecutor(endpoint, provider=provider)
    # The local policy fetches Hub models on first use (nothing else could run them); hybrid does not,
    # since remote inference covers what is not on disk. HUGGINGGPT_DOWNLOAD_MODELS=1/0 overrides.
    downloads = config.switch("download_models")
    download = downloads if downloads is not None else policy == "local"
    local, note = _local_executor(catalog, download) if policy != "remote" else (None, None)
    if local is None and policy == "local":
        raise ModelLoadError(None, note or "local execution is unavailable")
    executor = HybridExecutor(local, remote, catalog=catalog, policy=policy)
    if note:
        logger.warning(note)
        executor.notes.append(note)
    return executor


def local_unavailable(task: str | None = None) -> str:
    """Why this installation cannot run task models locally ("" when it can): what to install, with
    the extra ``task`` needs besides ``local`` (``diffusers`` for image generation, ...)."""
    missing = [name for name in ("transformers", "torch") if importlib.util.find_spec(name) is None]
    if not missing:
        return ""
    extras = ["local"]
    if task is not None:
        from hugginggpt.tools.executors.local_tasks import handler_for

        handler = handler_for(task)
        if handler is not None and handler.extra not in extras:
            extras.append(handler.extra)
    return f"{' and '.join(missing)} not installed: pip install 'hugginggpt[{','.join(extras)}]'"


def _local_executor(catalog: "ModelCatalog", download: bool = False) -> tuple[Executor | None, str | None]:
    """A LocalExecutor, or None and why (missing transformers/torch)."""
    missing = local_unavailable()
    if missing:
        return None, f"local execution unavailable ({missing}); running every task remotely"
    try:
        from hugginggpt.tools.executors.local import LocalExecutor
    except ImportError as exc:
        return None, f"local execution unavailable ({exc}); running every task remotely"
    return LocalExecutor(catalog=catalog, download=download), None
