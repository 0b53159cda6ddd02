"""Hub models as folders on this machine: Hub ids, their snapshots in the Hugging Face cache, and
downloads into it (the local executor, the ControlNet base pipeline and ``models pull`` use them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")

#: Weight formats transformers/diffusers on torch never read: not worth downloading.
_FOREIGN_WEIGHTS = ["*.h5", "*.msgpack", "*.onnx", "onnx/*", "*.ot", "*.tflite", "*.mlmodel", "*.gguf", "*.ckpt",
                    "coreml/*", "openvino/*", "flax_model*", "tf_model*", "rust_model*"]


def is_hub_id(model: str) -> bool:
    """Whether ``model`` looks like a Hub repository id (``org/name`` or ``name``)."""
    return bool(_HUB_ID.match(model))


def download_snapshot(model_id: str) -> Path:
    """Download ``model_id`` into the Hugging Face cache (safetensors only when the repo has them)."""
    from huggingface_hub import HfApi, snapshot_download

    ignore = list(_FOREIGN_WEIGHTS)
    if any(name.endswith(".safetensors") for name in HfApi().list_repo_files(model_id)):
        ignore.append("*.bin")  # the same weights twice otherwise
    return Path(snapshot_download(model_id, ignore_patterns=ignore))


def hub_json(model_id: str, filename: str) -> dict[str, Any] | None:
    """The JSON object in file ``filename`` of the Hub model ``model_id`` (downloaded into the Hugging Face
    cache, or read from it offline); None when it cannot be had (no such file, no network, not JSON).
    What a remote task needs to know about a model its server does not say (a tokenizer's mask token)."""
    if not _HUB_ID.match(model_id):
        return None
    from huggingface_hub import hf_hub_download

    try:
        data = json.loads(Path(hf_hub_download(model_id, filename)).read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - any failure means "not known": the caller goes on without it
        return None
    return data if isinstance(data, dict) else None


def hub_offline() -> bool:
    """Whether huggingface_hub is in offline mode (``HF_HUB_OFFLINE=1``): no download can happen."""
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def cached_snapshot(model_id: str) -> Path | None:
    """The folder of ``model_id`` in the Hugging Face cache, without touching the network."""
    if not _HUB_ID.match(model_id):
        return None
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model_id, local_files_only=True))
    except Exception:  # noqa: BLE001  not cached (LocalEntryNotFoundError) or an id the Hub rejects
        return None
