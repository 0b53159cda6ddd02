"""Issue 13 item 8: a bad setting is one line on stderr that names the setting and the cause, never a
traceback, and the run stops before any model loads."""

from __future__ import annotations

import os

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from hugginggpt import build
from hugginggpt.cli import run_cmd
from hugginggpt.cli.main import main


@pytest.fixture(autouse=True)
def _settings(monkeypatch, tmp_path):
    for var in ("HUGGINGGPT_LLM", "HUGGINGGPT_AGENT", "HUGGINGGPT_EXECUTION", "HUGGINGGPT_TRACE_DIR",
                "HUGGINGGPT_ENDPOINT", "HUGGINGGPT_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.chdir(tmp_path)
    script = [AIMessage("Thought: done\nFinal Answer: ok")]
    monkeypatch.setattr(build, "make_llm", lambda settings: FakeMessagesListChatModel(responses=script))
    monkeypatch.setattr(build, "make_tools", lambda settings, catalog=None: [])


def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("x")
    return path


def test_a_runs_folder_under_a_file_in_hugginggpt_home(capsys, monkeypatch, a_file):
    monkeypatch.setenv("HUGGINGGPT_HOME", f"{a_file}/runs")
    line = one_line_error(capsys, ["run", "hi", "--agent", "react"])
    assert "HUGGINGGPT_HOME" in line and "is a file, not a folder" in line


def test_a_trace_dir_under_a_file(capsys, a_file):
    line = one_line_error(capsys, ["run", "hi", "--agent", "react", "--trace-dir", f"{a_file}/x"])
    assert "--trace-dir" in line and "is a file, not a folder" in line


def test_an_endpoint_that_is_not_http(capsys):
    line = one_line_error(capsys, ["run", "hi", "--agent", "react", "--endpoint", "ftp://x"])
    assert "--endpoint" in line and "must be an http(s) URL" in line and "ftp://x" in line


def test_a_config_file_that_is_a_folder(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path))
    line = one_line_error(capsys, ["run", "hi", "--agent", "react"])
    assert "HUGGINGGPT_CONFIG" in line and "is a folder, not a file" in line


def test_a_config_file_that_is_a_fifo(capsys, monkeypatch, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "fifo"))
    line = one_line_error(capsys, ["run", "hi", "--agent", "react"])
    assert "HUGGINGGPT_CONFIG" in line and "not a regular file" in line


def test_a_runs_folder_the_os_refuses_at_run_time(capsys, tmp_path):
    """A folder the checks cannot foresee (here: made read-only after the check passes) still ends in
    one line that names the settings that place it."""
    parent = tmp_path / "ro"
    parent.mkdir()
    run_cmd_settings = run_cmd.settings_from

    def settings_then_lock(args):
        settings = run_cmd_settings(args)
        parent.chmod(0o500)
        return settings

    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(run_cmd, "settings_from", settings_then_lock)
            if os.geteuid() == 0:  # root writes anyway: make the parent a file instead
                parent.chmod(0o700)
                parent.rmdir()
                parent.write_text("")
                mp.setattr(run_cmd, "settings_from", run_cmd_settings)
                mp.setattr("hugginggpt.config.check_places", lambda settings: None)
            line = one_line_error(capsys, ["run", "hi", "--agent", "react", "--trace-dir", str(parent / "runs")])
    finally:
        if parent.is_dir():
            parent.chmod(0o700)
    assert "--trace-dir or HUGGINGGPT_HOME" in line and "cannot make the run folder" in line


@pytest.mark.parametrize("path", ["/dev/zero", "."])
def test_an_input_that_is_no_regular_file_stops_the_run_before_any_llm_call(capsys, monkeypatch, path):
    """Issue 31 item 7: ``run --file /dev/zero`` passed the file check and planned for 90 s before the
    workspace refused the file."""
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")

    def no_llm(settings):
        raise AssertionError("no LLM is made for a request whose file is no regular file")

    monkeypatch.setattr(build, "make_llm", no_llm)
    line = one_line_error(capsys, ["run", "Describe this", "--file", path])
    assert f"input file is not a regular file: {path}" in line
