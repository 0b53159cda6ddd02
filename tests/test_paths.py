"""expand_home: ``~`` expanded where it names a home, the text kept where it names none."""

from __future__ import annotations

from pathlib import Path

from hugginggpt.paths import expand_home


def test_home_is_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert expand_home("~/models/a.gguf") == tmp_path / "models" / "a.gguf"
    assert expand_home(Path("~")) == tmp_path


def test_a_user_that_does_not_exist_leaves_the_path_as_written():
    # Path.expanduser raises RuntimeError here ("Could not determine home directory.")
    assert expand_home("~0") == Path("~0")
    assert expand_home("~no-such-user-hgpt/cat.png") == Path("~no-such-user-hgpt/cat.png")


def test_paths_without_a_tilde_are_unchanged():
    assert expand_home("outputs/a.png") == Path("outputs/a.png")
    assert expand_home("/abs/a~b.png") == Path("/abs/a~b.png")
