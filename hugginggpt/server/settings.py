"""The server's own settings: where it listens, who may call it, how much it takes on, how long it keeps runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from hugginggpt import config
from hugginggpt.paths import expand_home

#: A mebibyte (the upload limit's unit; the same as ``tools.resources.MiB``, which this module does not import:
#: the CLI reads these settings without loading the tools).
MiB = 1 << 20

@dataclass(frozen=True)
class ServerSettings:
    """Limits and policies of one server process: what the server adds to the package's settings
    (``hugginggpt.config``: its ``Settings`` pick the agent and models, its ``TABLE`` every variable). The
    environment reaches it only through that table: ``runs_dir`` defaults to ``config.runs_home()/server``
    and the API key to ``HUGGINGGPT_API_KEY`` (``key_from_env``).

    ``max_active`` runs execute at once; up to ``max_queued`` more wait their turn in arrival order;
    past that a request gets 429 with ``Retry-After``. ``request_timeout`` bounds one run (seconds).
    Finished runs and their folders are kept ``keep_runs_s`` seconds (and at most ``max_kept_runs``
    finished runs), then removed. ``cors_origins`` empty means no CORS headers at all, and no request
    from another origin (``same_origin.py``); ``allowed_hosts``: the ``Host`` names the server answers
    besides the local ones (default: only local names, unless it listens on all addresses).
    ``header_timeout_s``: a connection that has not sent a request's headers in this time is closed.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    api_key: str | None = None
    runs_dir: Path = field(default_factory=lambda: config.runs_home() / "server")
    max_active: int = 4
    max_queued: int = 32
    request_timeout: float = 600.0
    keep_runs_s: float = 3600.0
    max_kept_runs: int = 1000
    max_upload_bytes: int = 20 * MiB
    max_files: int = 8
    max_message_chars: int = 100_000
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    retry_after_s: int = 5
    header_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        for name in ("max_active", "max_kept_runs", "max_upload_bytes", "max_files", "max_message_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_queued",):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("request_timeout", "keep_runs_s", "header_timeout_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        object.__setattr__(self, "runs_dir", expand_home(self.runs_dir).resolve())

    @staticmethod
    def key_from_env(given: str | None) -> str | None:
        """The API key: the flag's, else ``HUGGINGGPT_API_KEY``'s, else none (no auth)."""
        return given or config.env("api_key") or None
