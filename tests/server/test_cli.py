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
])
def test_bad_serve_flags_fail_with_one_line(argv, expected, capsys):
    assert main(["serve", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_serve_has_no_per_request_flags(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--file", "x.png"])
    assert "unrecognized arguments: --file" in capsys.readouterr().err
