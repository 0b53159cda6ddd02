"""The project's shared folder (real models and data that are not part of the repo), found in one place.

It is ``../shared`` from the repository root, as on every developer machine and in CI, unless
``HUGGINGGPT_SHARED`` names another folder. Tests and benchmarks use these functions; no file in the
repo spells a machine's absolute path.

- :func:`shared_dir` / :func:`shared_path`: the folder and paths in it.
- :func:`fetch_shared_model`: run ``models/fetch-gguf`` or ``models/fetch-model`` and return the file
  or folder it prints last (``SharedModelUnavailable`` with the reason otherwise).
- :func:`gguf_or_skip` / :func:`model_or_skip`: the same for tests, skipping with the reason.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV_VAR = "HUGGINGGPT_SHARED"


class SharedModelUnavailable(RuntimeError):
    """A shared model could not be fetched (no shared folder, no script, or the script failed)."""


def shared_dir() -> Path:
    """``$HUGGINGGPT_SHARED``, else ``../shared`` from the repository root."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured).expanduser() if configured else REPO / ".." / "shared"


def shared_path(*parts: str) -> Path:
    """A path inside the shared folder, e.g. ``shared_path("taskbench")``."""
    return shared_dir().joinpath(*parts)


def fetch_shared_model(name: str, *, script: str = "fetch-gguf", timeout: float = 900) -> Path:
    """The cached file (``fetch-gguf``) or folder (``fetch-model``) of a shared model, fetched once."""
    fetch = shared_path("models", script)
    if not fetch.is_file():
        raise SharedModelUnavailable(f"no {script} script at {fetch} (set {ENV_VAR} to the shared folder)")
    try:
        done = subprocess.run([str(fetch), name], check=False, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SharedModelUnavailable(f"{script} {name} failed: {exc}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not Path(lines[-1]).exists():
        raise SharedModelUnavailable(f"{script} {name} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return Path(lines[-1])


def gguf_or_skip(name: str) -> str:
    """The path of a shared GGUF (``smollm2-135m``, ``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``), or skip."""
    import pytest

    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    try:
        return str(fetch_shared_model(name, script="fetch-gguf"))
    except SharedModelUnavailable as exc:
        pytest.skip(str(exc))


def model_or_skip(name: str) -> Path:
    """The folder of a shared Hub-layout model (``all-minilm-l6-v2``), or skip."""
    import pytest

    try:
        return fetch_shared_model(name, script="fetch-model")
    except SharedModelUnavailable as exc:
        pytest.skip(str(exc))
