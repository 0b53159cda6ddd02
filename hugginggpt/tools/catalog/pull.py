"""Fetch models into the Hugging Face cache ahead of a run (``hugginggpt models pull TASK|MODEL_ID``).

A target is one of:

- a task name: the catalog's top candidate for it (the model a run would download first);
- a Hub model id: the repo's weights the local executor reads (one ``file`` for a GGUF card);
- ``gguf:OWNER/REPO/FILE.gguf`` (or ``OWNER/REPO/FILE.gguf``): one GGUF file, as ``--llm`` names it.

Downloads go through huggingface_hub (``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_CACHE`` apply) and show
its progress bars on stderr; what is already cached is not fetched again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggpt.errors import HuggingGPTError, error_line


class PullError(HuggingGPTError):
    """A model could not be fetched; the message says which and why, in one line."""


def pull(target: str, catalog: Any = None) -> Path:
    """Download ``target`` (see the module docstring) and return its local file or folder."""
    from hugginggpt.llm.specs import is_hub_file, resolve_gguf

    ref = target.strip()
    if ref.startswith("gguf:") or is_hub_file(ref):
        return resolve_gguf(ref.removeprefix("gguf:"))
    if catalog is None:
        from hugginggpt.tools.catalog import ModelCatalog

        catalog = ModelCatalog(scan_hf_cache=False)
    model_id, file = _model_of(ref, catalog)
    try:
        if file:
            from huggingface_hub import hf_hub_download

            return Path(hf_hub_download(model_id, file))
        from hugginggpt.tools.executors.hub_snapshots import download_snapshot

        return download_snapshot(model_id)
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line naming the model
        raise PullError(f"cannot download {model_id}{' ' + file if file else ''}: {_cause(exc)}") from None


def _model_of(ref: str, catalog: Any) -> tuple[str, str | None]:
    """(Hub id, single file or None) for a task name or a model id."""
    from hugginggpt.tools.executors.hub_snapshots import is_hub_id
    from hugginggpt.tools.table import task_table

    if ref in task_table():
        cards = catalog.candidates(ref, k=1)
        if not cards:
            raise PullError(f"the catalog has no model for task {ref}; name a model id instead")
        return cards[0].id, getattr(cards[0], "file", None)
    if not is_hub_id(ref) or "/" not in ref:
        raise PullError(f"{ref!r} is neither a task (see `hugginggpt tools`) nor a Hub model id like org/name")
    for task in catalog.tasks():
        for card in catalog.candidates(task, k=1000):
            if card.id == ref and getattr(card, "file", None):
                return ref, card.file
    return ref, None


def _cause(exc: BaseException) -> str:
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    if isinstance(exc, LocalEntryNotFoundError):
        return "the Hub is unreachable and it is not in the HF cache"
    if isinstance(exc, GatedRepoError):
        return "the repo is gated: accept its terms on the Hub and set HF_TOKEN"
    if isinstance(exc, RepositoryNotFoundError):
        return "no such repo on the Hub (or it is private: set HF_TOKEN)"
    return error_line(exc)
