"""`hugginggpt serve`'s flags: bad values stop it with one line naming the flag, before anything loads."""

from __future__ import annotations

import pytest

from hugginggpt.cli.main import main


@pytest.mark.parametrize(("argv", "expected"), [
    (["--port", "70000"], "--port must be between 1 and 65535, got 70000"),
    (["--max-active", "0"], "--max-active must be at least 1, got 0"),
    (["--timeout", "0"], "--timeout must be positive"),
    (["--keep-runs", "-1"], "--keep-runs must be positive"),
    (["--llm", "gguf:/no/such/model.gguf"], "GGUF file not found: /no/such/model.gguf"),
    # issue 23: nan was accepted (runs never removed) or gave an unclear message
    (["--keep-runs", "nan"], "--keep-runs must be positive, got nan"),
    (["--timeout", "inf"], "--timeout must be positive, got inf"),
    (["--max-upload-mb", "nan"], "--max-upload-mb must be a positive number of MiB, got nan"),
    (["--max-upload-mb", "-2"], "--max-upload-mb must be a positive number of MiB, got -2"),
    # issue 23: a traceback each
    (["--base-url", "http://[::1"], "base_url (--base-url, HUGGINGGPT_BASE_URL) is not a valid URL: 'http://[::1'"),
    (["--runs-dir", "/dev/null/runs"], "--runs-dir '/dev/null/runs' cannot be made: /dev/null is a file"),
    # issue 31 item 7: an OverflowError traceback; the default folder used without a word
    (["--max-upload-mb", "1e308"], "--max-upload-mb must be at most 1048576 MiB, got 1e+308"),
    (["--runs-dir", ""], "--runs-dir is empty: give a folder"),
    (["--runs-dir", "  "], "--runs-dir is empty: give a folder"),
])
def test_bad_serve_flags_fail_with_one_line(argv, expected, capsys):
    assert main(["serve", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_port_in_use_fails_with_one_line_before_anything_loads(capsys, monkeypatch):
    """Issue 23: `serve` exited with status 0 when it could not bind its port, after loading the models."""
    import socket

    from hugginggpt import build

    def no_llm(settings):
        raise AssertionError("nothing loads when the port is taken")

    monkeypatch.setattr(build, "make_llm", no_llm)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 1
    err = capsys.readouterr().err.strip()
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_serve_has_no_per_request_flags(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--file", "x.png"])
    assert "unrecognized arguments: --file" in capsys.readouterr().err


def test_serve_flags_default_to_the_server_settings_own_defaults(tmp_path, monkeypatch):
    """One home for the server's limits: `serve` without flags gives the settings ServerSettings() gives."""
    from dataclasses import fields

    from hugginggpt.cli.main import build_parser
    from hugginggpt.cli.run_cmd import settings_from
    from hugginggpt.cli.serve_cmd import server_settings
    from hugginggpt.server.settings import ServerSettings

    monkeypatch.delenv("HUGGINGGPT_API_KEY", raising=False)
    monkeypatch.setenv("HUGGINGGPT_HOME", str(tmp_path))
    args = build_parser().parse_args(["serve"])
    made, default = server_settings(args, settings_from(args)), ServerSettings()
    assert {f.name: getattr(made, f.name) for f in fields(ServerSettings)} == \
           {f.name: getattr(default, f.name) for f in fields(ServerSettings)}
