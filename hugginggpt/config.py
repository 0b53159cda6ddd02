"""Every setting the package reads from the environment, in one table, and the run settings resolved
from flags, environment variables and a TOML file, in that order.

``TABLE`` lists each ``HUGGINGGPT_*`` variable once: its name, the value it stands for when unset (or
empty) and what it means. No other module names or reads one: the CLI and server resolve ``Settings``
once (``load_settings``) and pass them down (``hugginggpt/build.py``); a deep module that must read a
variable when it acts (a media bound, the runs folder, the prompt cache) reads it here, through
``env(key)`` / ``value(key)``, ``key`` being the name without ``HUGGINGGPT_`` in lower case
(``value("max_audio_samples")``). ``settings_markdown()`` renders the table for docs/CONFIGURATION.md.

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

#: The embedded controller used when nothing else is configured: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB,
#: sha256 cc324af0...bb046), downloaded once from the Hub into the HF cache. The planning figures in the
#: README and docs/results are measured on this file.
EMBEDDED_DEFAULT_LLM = "gguf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
#: The hosted controller used when only ``OPENAI_API_KEY`` is set.
HOSTED_DEFAULT_LLM = "openai:gpt-4o-mini"

#: THE agent registry: each agent's name (``--agent``, ``HUGGINGGPT_AGENT``, the server's ``model``) and the
#: module and class that implement it, imported only when one is built. ``AGENTS`` (the names),
#: ``build.make_agent``, ``hugginggpt.agent``'s lazy attributes and ``eval.compare`` all read it.
AGENT_CLASSES: dict[str, tuple[str, str]] = {
    "global": ("hugginggpt.agent.global_plan", "GlobalPlanAgent"),
    "react": ("hugginggpt.agent.react", "ReActAgent"),
    "tools": ("hugginggpt.agent.function_calling", "FunctionCallingAgent"),
}
AGENTS = tuple(AGENT_CLASSES)
EXECUTION_POLICIES = ("local", "remote", "hybrid")

PREFIX = "HUGGINGGPT_"


@dataclass(frozen=True)
class Setting:
    """One environment variable: its ``name``, the ``default`` it stands for when unset or empty
    (None: nothing, or what ``meaning`` says), and ``meaning``, one line for people."""

    name: str
    default: str | None
    meaning: str
    on_off: bool = False
    """Whether the variable is a switch, read by ``switch`` only."""
    options: tuple[str, ...] = ()
    """The words the variable takes, when it is one of a few (read by ``choice``)."""

    @property
    def key(self) -> str:
        """The name without ``HUGGINGGPT_``, in lower case: ``HUGGINGGPT_MAX_AUDIO_SAMPLES`` -> ``max_audio_samples``;
        for the ``Settings`` fields also the TOML key and (with dashes) the flag."""
        return self.name.removeprefix(PREFIX).lower()


#: THE table of the variables the package reads, each once. ``Settings`` fields first (flag > variable >
#: config file > default), then the ones read where they act.
TABLE: tuple[Setting, ...] = (
    Setting("HUGGINGGPT_LLM", None, "controller LLM spec (`--llm`); unset: `openai:gpt-4o-mini` when "
            "`OPENAI_API_KEY` is set, else the embedded GGUF (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, from the Hub)"),
    Setting("HUGGINGGPT_BASE_URL", None, "OpenAI-compatible server of the controller LLM (`--base-url`)"),
    Setting("HUGGINGGPT_AGENT", "global", "agent (`--agent`): `global`, `react` or `tools`"),
    Setting("HUGGINGGPT_EXECUTION", "hybrid", "where tasks run (`--execution`): `local`, `remote` or `hybrid`"),
    Setting("HUGGINGGPT_ENDPOINT", None, "remote inference endpoint URL (`--endpoint`); unset: Hugging Face "
            "Inference Providers"),
    Setting("HUGGINGGPT_TRACE_DIR", None, "parent folder of run folders for one command (`--trace-dir`); "
            "unset: `HUGGINGGPT_HOME`"),
    Setting("HUGGINGGPT_LOCAL_MODELS", None, "local model folders, comma-separated, each `DIR` or `TASK=DIR` "
            "(`--local-model`)"),
    Setting("HUGGINGGPT_CONFIG", None, "the TOML settings file; unset: `$XDG_CONFIG_HOME/hugginggpt/config.toml`, "
            "else `~/.config/hugginggpt/config.toml`"),
    Setting("HUGGINGGPT_HOME", "hugginggpt-runs", "folder of the run folders (each run's files and `trace.json`); "
            "the server's go under `<it>/server`"),
    Setting("HUGGINGGPT_PROVIDER", "auto", "Hugging Face Inference Provider, for remote tasks and "
            "`huggingface:` controllers"),
    Setting("HUGGINGGPT_DOWNLOAD_MODELS", None, "on/off (`1`/`0`): whether local execution may download Hub "
            "models; unset: on with `--execution local`, else off", on_off=True),
    Setting("HUGGINGGPT_API_KEY", None, "the key `hugginggpt serve` requires as `Authorization: Bearer` "
            "(`--api-key`); unset: no auth"),
    Setting("HUGGINGGPT_CACHE", None, "cache folder (llama.cpp prompt states); unset: "
            "`$XDG_CACHE_HOME/hugginggpt`, else `~/.cache/hugginggpt`"),
    Setting("HUGGINGGPT_PROMPT_CACHE", "disk", "llama.cpp prompt-prefix cache: `disk` (RAM and disk), `ram` or `off`",
            options=("disk", "ram", "off")),
    Setting("HUGGINGGPT_GRAMMAR_SAMPLING", "checked", "embedded JSON grammar: `checked` (the drawn token "
            "checked, redrawn if refused) or `full` (llama-cpp-python's own sampler)", options=("checked", "full")),
    Setting("HUGGINGGPT_JUMP_FORWARD", "on", "embedded JSON grammar: on decodes the text the grammar forces "
            "in one batch (with `checked` sampling), off one token at a time", on_off=True),
    Setting("HUGGINGGPT_CHOICE_CHECK", "on", "planning: on asks the embedded model, in questions of their own, "
            "about each task name it chose narrowly (between it and one or two others), each step of a task with a "
            "twin or sibling, each generation written again as the same task (what it gives the user), each step "
            "reading a file beside an unread new version of it (which it works on), and each edit of a photo the "
            "user gives (an edit, or a drawing along a map of it); off keeps its answer",
            on_off=True),
    Setting("HUGGINGGPT_WANTS_CHECK", "on", "planning: on asks the embedded model alone whether the user wants "
            "back a picture, sound or video that its answer says is wanted and no task makes, and plans afresh "
            "once when it says yes in both orders; and, for a plan of one task handed the whole message, whether "
            "the message is small talk (then no task); off keeps the answer with a note", on_off=True),
    Setting("HUGGINGGPT_PLAN_DRAWS", "1", "planning: how many plans a sampling controller draws for a request "
            "(each with the next seed, at its own temperature); 3 or more keeps the plan most draws agree on, "
            "stopping once the rest cannot change it (about twice the planning calls for 3); 1: one draw"),
    Setting("HUGGINGGPT_PLAN_VOTE", "always", "planning: which requests get the draws of `HUGGINGGPT_PLAN_DRAWS`: "
            "`always` every request, `unsure` only those whose answer chose a task name narrowly (the embedded "
            "model's choices asked about alone: other controllers report none)", options=("always", "unsure")),
    Setting("HUGGINGGPT_VERBOSE", None, "any value: the CLI keeps library logs and progress bars"),
    Setting("HUGGINGGPT_DIFFUSION_STEPS", "25", "denoising steps of diffusion tasks when the call does not say"),
    Setting("HUGGINGGPT_CONTROLNET_BASE", None, "base pipeline (folder or Hub id) of ControlNet tasks; unset: "
            "the ControlNet README's `base_model`, else Stable Diffusion 1.5 / SDXL"),
    Setting("HUGGINGGPT_ALLOW_PRIVATE_URLS", None, "on/off: when on, URL downloads may reach private, "
            "loopback and link-local addresses", on_off=True),
    Setting("HUGGINGGPT_MAX_IMAGE_PIXELS", "89478485", "most pixels of an input image (Pillow's warning threshold)"),
    Setting("HUGGINGGPT_MAX_AUDIO_SECONDS", "3600", "longest input audio, in seconds"),
    Setting("HUGGINGGPT_MAX_AUDIO_SAMPLES", "64000000", "most samples (frames x channels) of an input audio: "
            "about an hour of 16 kHz mono, 22 minutes of 48 kHz mono or 11 minutes of 48 kHz stereo (decoding "
            "costs CPU in proportion: about 1 s at this limit)"),
    Setting("HUGGINGGPT_MAX_VIDEO_PIXELS", str(64 << 20), "most pixels of the frames sampled from one video, "
            "together (larger frames are scaled down)"),
)
SETTINGS: dict[str, Setting] = {setting.key: setting for setting in TABLE}


def var(key: str) -> str:
    """The variable's name: ``var("home")`` is ``HUGGINGGPT_HOME`` (``KeyError`` for a key not in ``TABLE``)."""
    return SETTINGS[key].name


def env(key: str) -> str | None:
    """The variable as set now (None when unset), read when called so a changed environment counts."""
    return os.environ.get(var(key))


def value(key: str) -> str:
    """The variable when set and not empty, else its default from ``TABLE`` (a variable without one:
    ask ``env``)."""
    return env(key) or default(key)


ON_WORDS = ("1", "true", "yes", "on")
OFF_WORDS = ("0", "false", "no", "off")


def switch(key: str) -> bool | None:
    """An on/off variable: True for ``1``/``true``/``yes``/``on``, False for ``0``/``false``/``no``/``off`` (any
    letter case, spaces aside); when unset or empty, its default read the same way (None for a variable without
    one). Any other value raises ``ConfigError`` naming the variable and the words it takes: every switch reads
    its value here, so ``OFF`` means the same to each. ``KeyError`` for a variable that is no switch."""
    if not SETTINGS[key].on_off:
        raise KeyError(f"{var(key)} is not an on/off variable")
    given = (env(key) or "").strip()
    if not given:
        fallback = SETTINGS[key].default
        if fallback is None:
            return None
        given = fallback
    word = given.lower()
    if word in ON_WORDS or word in OFF_WORDS:
        return word in ON_WORDS
    raise ConfigError(f"{var(key)}={given!r} is not a switch value: use one of {', '.join(ON_WORDS)} "
                      f"or {', '.join(OFF_WORDS)}")


def count(key: str) -> int:
    """A whole-number variable of at least 1: its value when set and not empty, else its default. Any other
    value raises ``ConfigError`` naming the variable."""
    given = (env(key) or "").strip() or default(key)
    try:
        number = int(given)
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(f"{var(key)}={given!r} is not a whole number of at least 1")
    return number


def choice(key: str) -> str:
    """A variable that is one of a few words (its ``options``): the word when set and not empty (any letter case,
    spaces aside), else its default. Any other value raises ``ConfigError`` naming the variable and its words."""
    options = SETTINGS[key].options
    if not options:
        raise KeyError(f"{var(key)} is not a variable of a few words")
    given = (env(key) or "").strip() or default(key)
    if given.lower() not in options:
        raise ConfigError(f"{var(key)}={given!r} is not one of {', '.join(options)}")
    return given.lower()


def default(key: str) -> str:
    """The variable's default from ``TABLE`` (``KeyError`` for a variable without one)."""
    given = SETTINGS[key].default
    if given is None:
        raise KeyError(f"{var(key)} has no default")
    return given


def runs_home() -> Path:
    """The folder of run folders: ``HUGGINGGPT_HOME`` (default ``hugginggpt-runs``, relative to the
    current directory). The workspace, the server and the settings check all ask here."""
    return Path(value("home"))


def settings_markdown() -> str:
    """``TABLE`` as a markdown table (variable, default, meaning), as docs/CONFIGURATION.md holds it."""
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for setting in TABLE:
        shown = f"`{setting.default}`" if setting.default is not None else "-"
        rows.append(f"| `{setting.name}` | {shown} | {setting.meaning} |")
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``llm`` None means "choose the default controller" (see ``llm_spec``)."""

    llm: str | None = None
    base_url: str | None = None
    agent: str = default("agent")
    execution: str = default("execution")
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


#: The variable of each ``Settings`` field (its TOML key and flag carry the same name).
ENV_VARS = {f.name: var(f.name) for f in fields(Settings)}
_CHOICES = {"agent": AGENTS, "execution": EXECUTION_POLICIES}


def config_path() -> tuple[Path, bool]:
    """The config file and whether the user named it explicitly (then it must exist)."""
    explicit = env("config")
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
    source = f" (set by {var('config')})" if explicit else ""
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
    for name in ENV_VARS:
        if env(name):
            values[name] = env(name)
    values.update({k: v for k, v in overrides.items() if v is not None})
    for name, choices in _CHOICES.items():
        if name in values and values[name] not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {values[name]!r}")
    settings = replace(Settings(), **values)
    check_places(settings)
    for setting in TABLE:  # a switch or a choice set to another word is named now, not when a run first reads it
        if setting.on_off:
            switch(setting.key)
        elif setting.options:
            choice(setting.key)
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
    home = env("home")
    if home:
        check_folder(var("home"), home)


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
