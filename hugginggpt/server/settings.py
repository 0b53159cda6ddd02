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
    ``header_timeout_s``: a connection that has not sent a request's headers in this time is closed;
    ``body_timeout_s``, ``min_body_bytes_per_s``: one whose body, after its first ``body_timeout_s``
    seconds, has come slower than ``min_body_bytes_per_s`` on average is closed too
    (``connections.Deadlines``). ``max_upload_bytes_in_flight``: the bytes all requests together may be
    sending at once (each is counted at its declared length, or at the most its form may hold, when it
    is admitted, before its body is read; default: twice what one form may hold); a request past it gets
    429. ``stop_grace_s``: a stopping server answers what waits, cancels its runs and exits within it.
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
    body_timeout_s: float = 10.0
    min_body_bytes_per_s: float = 16 * 1024
    max_upload_bytes_in_flight: int | None = None
    stop_grace_s: float = 10.0

    def __post_init__(self) -> None:
        for name in ("max_active", "max_kept_runs", "max_upload_bytes", "max_files", "max_message_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_queued",):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("request_timeout", "keep_runs_s", "header_timeout_s", "body_timeout_s", "min_body_bytes_per_s",
                     "stop_grace_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if self.max_upload_bytes_in_flight is not None and self.max_upload_bytes_in_flight < self.max_form_bytes:
            raise ValueError(f"max_upload_bytes_in_flight must be at least what one form may hold "
                             f"({self.max_form_bytes} bytes), got {self.max_upload_bytes_in_flight}")
        object.__setattr__(self, "runs_dir", expand_home(self.runs_dir).resolve())

    #: The form fields of a run besides its files, and the bytes each may take (4 per character of a message).
    FORM_FIELDS = 16

    @property
    def max_field_bytes(self) -> int:
        return 4 * self.max_message_chars

    @property
    def max_form_bytes(self) -> int:
        """The most bytes one multipart form may hold: its files, its fields, and 64 KiB of headers."""
        return self.max_upload_bytes * self.max_files + self.max_field_bytes * self.FORM_FIELDS + 65536

    @property
    def max_json_bytes(self) -> int:
        """The most bytes the JSON body of a request that starts a run may hold: 4 per character of the
        longest message, and 64 KiB for the rest."""
        return self.max_field_bytes + 65536

    @property
    def upload_bytes_in_flight(self) -> int:
        """``max_upload_bytes_in_flight``, or its default: twice what one form may hold."""
        return self.max_upload_bytes_in_flight or 2 * self.max_form_bytes

    @staticmethod
    def key_from_env(given: str | None) -> str | None:
        """The API key: the flag's, else ``HUGGINGGPT_API_KEY``'s, else none (no auth)."""
        return given or config.env("api_key") or None
