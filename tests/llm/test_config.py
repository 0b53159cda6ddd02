"""Settings precedence (flags > env > file > defaults) and clear errors for a bad config file."""

from __future__ import annotations

import pytest

from hugginggpt.config import ENV_VARS, load_settings, read_config_file
from hugginggpt.errors import ConfigError


@pytest.fixture
def config(monkeypatch, tmp_path):
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(path))
    return path


def test_precedence(config, monkeypatch):
    config.write_text('agent = "react"\nexecution = "local"\ntrace_dir = "from-file"\n')
    monkeypatch.setenv("HUGGINGGPT_EXECUTION", "remote")
    settings = load_settings(trace_dir="from-flag", agent=None)
    assert (settings.agent, settings.execution, settings.trace_dir) == ("react", "remote", "from-flag")


def test_defaults_without_file(monkeypatch, tmp_path):
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("HUGGINGGPT_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    settings = load_settings()
    assert (settings.agent, settings.execution, settings.llm) == ("global", "hybrid", None)


def test_named_config_file_must_exist(config):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()


@pytest.mark.parametrize(
    "text, message",
    [
        ("llm = ", "not valid TOML"),
        ('api_key = "x"', "unknown setting"),
        ("llm = 3", "llm must be a string"),
        ('agent = "smart"', "agent must be one of global, react, tools"),
    ],
)
def test_bad_config_files(config, text, message):
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings()


def test_read_config_file_returns_its_settings(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('llm = "openai:gpt-4o-mini"\nbase_url = "http://127.0.0.1:8000/v1"\n')
    assert read_config_file(path) == {"llm": "openai:gpt-4o-mini", "base_url": "http://127.0.0.1:8000/v1"}


def test_the_settings_table_is_read_when_asked(monkeypatch):
    """``config.env``/``value`` read the variable when called; empty counts as unset for ``value``;
    ``runs_home`` is HUGGINGGPT_HOME, else the table's default."""
    from pathlib import Path

    import pytest

    from hugginggpt import config

    assert config.var("max_audio_samples") == "HUGGINGGPT_MAX_AUDIO_SAMPLES"
    monkeypatch.setenv("HUGGINGGPT_PROVIDER", "hf-inference")
    assert config.value("provider") == "hf-inference"
    monkeypatch.setenv("HUGGINGGPT_PROVIDER", "")
    assert config.env("provider") == "" and config.value("provider") == "auto"
    monkeypatch.delenv("HUGGINGGPT_HOME", raising=False)
    assert config.runs_home() == Path("hugginggpt-runs")
    monkeypatch.setenv("HUGGINGGPT_HOME", "/tmp/elsewhere")
    assert config.runs_home() == Path("/tmp/elsewhere")
    with pytest.raises(KeyError):
        config.default("api_key")
    with pytest.raises(KeyError):
        config.var("no_such_setting")
    assert config.ENV_VARS["trace_dir"] == "HUGGINGGPT_TRACE_DIR"


@pytest.mark.parametrize("key", ["jump_forward", "choice_check", "wants_check", "allow_private_urls", "download_models"])
def test_every_switch_reads_on_and_off_the_same_way(monkeypatch, key):
    """One reader for on/off variables (``config.switch``): the same words in any letter case mean the same
    to each, unset means the table's default (None without one), and any other value is an error naming
    the variable."""
    from hugginggpt import config

    name = config.var(key)
    for word in ("1", "true", "Yes", " ON "):
        monkeypatch.setenv(name, word)
        assert config.switch(key) is True
    for word in ("0", "False", "no", "OFF"):
        monkeypatch.setenv(name, word)
        assert config.switch(key) is False
    monkeypatch.setenv(name, "")
    assert config.switch(key) is {"on": True, None: None}[config.SETTINGS[key].default]
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ConfigError, match=f"{name}='maybe' is not a switch value"):
        config.switch(key)
    with pytest.raises(ConfigError, match=name):  # named when the settings are read, before any run
        config.load_settings()
    with pytest.raises(KeyError):
        config.switch("provider")


@pytest.mark.parametrize("key", ["plan_vote", "prompt_cache", "grammar_sampling"])
def test_every_choice_reads_its_words_the_same_way(monkeypatch, key):
    """One reader for variables of a few words (``config.choice``): any letter case, spaces aside; unset or empty
    means the default; another word is an error naming the variable and its words, also when the settings are
    read before any run."""
    from hugginggpt import config

    name, options = config.var(key), config.SETTINGS[key].options
    for word in options:
        monkeypatch.setenv(name, f" {word.upper()} ")
        assert config.choice(key) == word
    monkeypatch.setenv(name, "")
    assert config.choice(key) == config.default(key)
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ConfigError, match=f"{name}='maybe' is not one of {', '.join(options)}"):
        config.choice(key)
    with pytest.raises(ConfigError, match=name):
        config.load_settings()
    with pytest.raises(KeyError):
        config.choice("jump_forward")


def test_the_prompt_cache_mode_is_the_variable_s_word(monkeypatch):
    from hugginggpt.llm.prompt_cache import prompt_cache_mode

    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "RAM")
    assert prompt_cache_mode() == "ram"
    monkeypatch.setenv("HUGGINGGPT_PROMPT_CACHE", "of")  # a typo is refused, not read as the default
    with pytest.raises(ConfigError, match="HUGGINGGPT_PROMPT_CACHE='of'"):
        prompt_cache_mode()


def test_the_switches_are_what_the_code_reads(monkeypatch):
    """Private URLs and Hub downloads follow ``config.switch``: ``no`` means no, in any letter case."""
    from hugginggpt.errors import ModelLoadError
    from hugginggpt.tools.executors import hybrid
    from hugginggpt.tools.resources.netguard import private_urls_allowed_by_env

    monkeypatch.setenv("HUGGINGGPT_ALLOW_PRIVATE_URLS", "YES")
    assert private_urls_allowed_by_env() is True
    monkeypatch.setenv("HUGGINGGPT_ALLOW_PRIVATE_URLS", "off")
    assert private_urls_allowed_by_env() is False
    asked = []
    monkeypatch.setattr(hybrid, "_local_executor", lambda catalog, download: (asked.append(download), (None, None))[1])
    for value, policy, download in (("No", "local", False), ("", "local", True), ("", "hybrid", False),
                                    ("on", "hybrid", True)):
        monkeypatch.setenv("HUGGINGGPT_DOWNLOAD_MODELS", value)
        try:
            hybrid.default_executor(policy=policy, endpoint="http://127.0.0.1:9")
        except ModelLoadError:  # no local executor from the stand-in: only what it was asked matters here
            pass
        assert asked[-1] is download, (value, policy)
