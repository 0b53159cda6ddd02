"""Settings from command-line flags, environment variables and a TOML file, in that order.

One place decides precedence, so the CLI and library calls (``load_llm()`` with no spec) agree.
The file (``~/.config/hugginggpt/config.toml``, or ``HUGGINGGPT_CONFIG``) holds plain settings::

    llm = "openai:gpt-4o-mini"
    base_url = "http://127.0.0.1:8000/v1"
    agent = "global"            # global | react | tools
    execution = "hybrid"        # local | remote | hybrid
    endpoint = "https://..."    # remote inference endpoint
    trace_dir = "runs"
    local_models = "image-to-text=/models/blip,/models/my-tts"   # local model folders

Secrets never go in it: API keys are read from the environment by the providers themselves.
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hugginggpt.errors import ConfigError
from hugginggpt.paths import expand_home

#: The embedded controller used when nothing else is configured (downloaded once into the HF cache).
EMBEDDED_DEFAULT_LLM = "gguf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf"
#: The hosted controller used when only ``OPENAI_API_KEY`` is set.
HOSTED_DEFAULT_LLM = "openai:gpt-4o-mini"

AGENTS = ("global", "react", "tools")
EXECUTION_POLICIES = ("local", "remote", "hybrid")


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``llm`` None means "choose the default controller" (see ``llm_spec``)."""

    llm: str | None = None
    base_url: str | None = None
    agent: str = "global"
    execution: str = "hybrid"
    endpoint: str | None = None
    trace_dir: str | None = None
    #: Local model folders, comma-separated, each ``DIR`` or ``TASK=DIR`` (task read from the folder if absent).
    local_models: str | None = None

    def local_model_entries(self) -> list[tuple[str | None, str]]:
        """``(task or None, folder)`` for each registered local model folder."""
        entries = []
        for item in (self.local_models or "").split(","):
            item = item.strip()
            if item:
                task, sep, folder = item.partition("=")
                entries.append((task.strip(), folder.strip()) if sep else (None, item))
        return entries

    def llm_spec(self) -> str:
        """The controller spec: the configured one, else OpenAI when its key is set, else embedded."""
        if self.llm:
            return self.llm
        if os.environ.get("OPENAI_API_KEY"):
            return HOSTED_DEFAULT_LLM
        return EMBEDDED_DEFAULT_LLM


ENV_VARS = {
    "llm": "HUGGINGGPT_LLM",
    "base_url": "HUGGINGGPT_BASE_URL",
    "agent": "HUGGINGGPT_AGENT",
    "execution": "HUGGINGGPT_EXECUTION",
    "endpoint": "HUGGINGGPT_ENDPOINT",
    "trace_dir": "HUGGINGGPT_TRACE_DIR",
    "local_models": "HUGGINGGPT_LOCAL_MODELS",
}
_CHOICES = {"agent": AGENTS, "execution": EXECUTION_POLICIES}


def config_path() -> tuple[Path, bool]:
    """The config file and whether the user named it explicitly (then it must exist)."""
    explicit = os.environ.get("HUGGINGGPT_CONFIG")
    if explicit:
        return expand_home(explicit), True
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "hugginggpt" / "config.toml", False


def read_config_file(path: str | Path | None = None) -> dict[str, Any]:
    """The settings in the config file ({} when the default file does not exist)."""
    explicit = path is not None
    if path is None:
        path, explicit = config_path()
    path = Path(path)
    source = " (set by HUGGINGGPT_CONFIG)" if explicit else ""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file {path} does not exist{source}") from None
        return {}
    except OSError as exc:
        raise ConfigError(f"config file {path}: {exc.strerror or exc}{source}") from None
    if stat.S_ISDIR(mode):
        raise ConfigError(f"config file {path} is a folder, not a file{source}")
    if not stat.S_ISREG(mode):
        raise ConfigError(f"config file {path} is not a regular file (a FIFO, socket or device){source}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read it: {exc.strerror or exc}{source}") from None
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    for key, value in data.items():
        if not isinstance(value, str):
            raise ConfigError(f"config file {path}: {key} must be a string, got {type(value).__name__}")
    return data


def load_settings(**overrides: Any) -> Settings:
    """Settings with precedence: explicit overrides (flags) > environment > config file > defaults.

    Overrides that are None count as "not given", so argparse namespaces can be passed as they are.
    """
    known = {f.name for f in fields(Settings)}
    unexpected = set(overrides) - known
    if unexpected:
        raise TypeError(f"unknown settings: {', '.join(sorted(unexpected))}")
    values: dict[str, Any] = dict(read_config_file())
    for name, var in ENV_VARS.items():
        if os.environ.get(var):
            values[name] = os.environ[var]
    values.update({k: v for k, v in overrides.items() if v is not None})
    for name, choices in _CHOICES.items():
        if name in values and values[name] not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {values[name]!r}")
    settings = replace(Settings(), **values)
    check_places(settings)
    return settings


def _where(name: str) -> str:
    """How a user sets ``name``: ``trace_dir (--trace-dir, HUGGINGGPT_TRACE_DIR)``."""
    return f"{name} (--{name.replace('_', '-')}, {ENV_VARS[name]})"


def check_places(settings: Settings) -> None:
    """One ``ConfigError`` line, naming the setting and the cause, for an endpoint or base URL that is
    not an http(s) URL and for a runs folder (``trace_dir``, ``HUGGINGGPT_HOME``) that cannot be one."""
    for name in ("endpoint", "base_url"):
        if getattr(settings, name):
            check_url(name, getattr(settings, name))
    if settings.trace_dir:
        check_folder(_where("trace_dir"), settings.trace_dir)
    if os.environ.get("HUGGINGGPT_HOME"):
        check_folder("HUGGINGGPT_HOME", os.environ["HUGGINGGPT_HOME"])


def check_url(name: str, value: str) -> None:
    """``value`` is an http(s) URL with a host that HTTP clients can parse (``http://[::1`` is not)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port raises for a bad one
    except ValueError as exc:
        raise ConfigError(f"{_where(name)} is not a valid URL: {value!r} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{_where(name)} must be an http(s) URL, got {value!r}")


def check_folder(setting: str, value: str) -> None:
    """``value`` is a folder, or one can be made there: its nearest existing ancestor is a writable
    folder. Nothing is created."""
    path = expand_home(value)
    probe = path
    try:
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        is_folder = probe.is_dir()
    except OSError as exc:
        raise ConfigError(f"{setting} {value!r}: {exc.strerror or exc}") from None
    if not is_folder:
        cause = "is a file" if probe == path else f"cannot be made: {probe} is a file, not a folder"
        raise ConfigError(f"{setting} {value!r} {cause}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{setting} {value!r}: {probe} is not writable")
