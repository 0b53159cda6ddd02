"""Bad --llm / --local-model values: one clear line naming the flag and the cause, before any model
loads or any LLM is called (the seams ``make_llm``/``make_agent`` fail the test if reached)."""

from __future__ import annotations

import pytest

from hugginggpt import build
from hugginggpt.cli.main import main


@pytest.fixture(autouse=True)
def _nothing_may_load(monkeypatch, tmp_path):
    for var in ("HUGGINGGPT_LLM", "HUGGINGGPT_LOCAL_MODELS", "HUGGINGGPT_AGENT", "HUGGINGGPT_EXECUTION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")

    def fail(*args, **kwargs):
        raise AssertionError("a model was loaded or an agent built before the options were checked")

    monkeypatch.setattr(build, "make_llm", fail)
    monkeypatch.setattr(build, "make_agent", fail)


def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("hugginggpt: error: ")
    return err.strip()


def a_model_folder(root):
    folder = root / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    return folder


def test_a_gguf_that_is_not_gguf(capsys, tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("<html>not a model</html>")
    err = one_line_error(capsys, ["run", "hi", "--llm", f"gguf:{fake}"])
    assert f"--llm gguf:{fake}" in err and "is not a GGUF file" in err


def test_a_gguf_that_does_not_exist_or_is_a_folder(capsys, tmp_path):
    err = one_line_error(capsys, ["run", "hi", "--llm", f"gguf:{tmp_path}/missing.gguf"])
    assert "--llm" in err and "GGUF file not found" in err
    err = one_line_error(capsys, ["run", "hi", "--llm", f"gguf:{tmp_path}"])
    assert "--llm" in err and "is a folder, not a GGUF file" in err


def test_local_model_for_an_unknown_task(capsys, tmp_path):
    folder = a_model_folder(tmp_path)
    err = one_line_error(capsys, ["run", "hi", "--local-model", f"sentence-similarty={folder}"])
    assert f"--local-model sentence-similarty={folder}" in err
    assert "unknown task 'sentence-similarty'" in err and "did you mean sentence-similarity" in err


def test_local_model_folder_that_holds_no_model(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no weights here")
    err = one_line_error(capsys, ["run", "hi", "--local-model", f"text-classification={empty}"])
    assert "--local-model text-classification=" in err and "holds no model" in err


def test_local_model_folder_that_is_missing_or_a_file(capsys, tmp_path):
    err = one_line_error(capsys, ["run", "hi", "--local-model", f"text-classification={tmp_path}/nowhere"])
    assert "--local-model" in err and "no such folder" in err
    file = tmp_path / "weights.txt"
    file.write_text("x")
    err = one_line_error(capsys, ["run", "hi", "--local-model", f"text-classification={file}"])
    assert "is a file" in err


def test_local_model_whose_task_cannot_be_told(capsys, tmp_path):
    folder = tmp_path / "weights-only"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\0" * 8)
    err = one_line_error(capsys, ["run", "hi", "--local-model", str(folder)])
    assert f"--local-model {folder}" in err and "cannot tell the task" in err and "TASK=" in err


def test_local_model_gguf_value_is_checked_too(capsys, tmp_path):
    fake = tmp_path / "summarizer.gguf"
    fake.write_bytes(b"PK\x03\x04 not gguf")
    err = one_line_error(capsys, ["run", "hi", "--local-model", f"summarization=gguf:{fake}"])
    assert "--local-model summarization=gguf:" in err and "is not a GGUF file" in err


def test_chat_checks_the_same_options(capsys, tmp_path):
    err = one_line_error(capsys, ["chat", "--local-model", f"no-such-task={a_model_folder(tmp_path)}"])
    assert "--local-model no-such-task=" in err and "unknown task" in err


def test_good_options_pass_the_checks(monkeypatch, tmp_path):
    """A real GGUF header and a model folder get through to the seams (which here record and stop)."""
    from hugginggpt.cli.validation import check_settings
    from hugginggpt.config import Settings

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)
    folder = a_model_folder(tmp_path)
    check_settings(Settings(llm=f"gguf:{gguf}", local_models=f"text-classification={folder},{folder}"))
    check_settings(Settings(llm="openai:gpt-4o-mini"))  # hosted specs are not files: nothing to check
