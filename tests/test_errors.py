"""error_line: the one way an exception is shown to a person or a model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from hugginggpt.errors import LLMError, TaskError, error_line, validation_problems


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    top_k: int = 5


def _validation_error(**values) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Args(**values)
    return info.value


def test_our_errors_by_their_message_others_with_their_type():
    assert error_line(TaskError("translation", "no model")) == "translation: no model"
    assert error_line(LLMError("")) == "LLMError"
    assert error_line(ValueError("bad value\n  Traceback detail")) == "ValueError: bad value"
    # a first line that ends in ":" heads its cause, which is kept
    assert error_line(RuntimeError("Error in generating model output:\nthe prompt is longer than the context\nmore")) == (
        "RuntimeError: Error in generating model output: the prompt is longer than the context")
    assert error_line(KeyError()) == "KeyError"
    assert error_line(FileNotFoundError(2, "No such file or directory", "/x/a.png")) == (
        "No such file or directory: /x/a.png")
    assert error_line("  a message\nover lines ") == "a message over lines"


def test_pydantic_errors_name_each_argument():
    error = _validation_error(top_k="many", colour="red")
    assert error_line(error) == ("invalid arguments: text: required argument missing; top_k: Input should be a "
                                 "valid integer, unable to parse string as an integer; colour: unknown argument")
    assert validation_problems(_validation_error(colour="red"), "field") == (
        "text: required field missing; colour: unknown field")


def test_secrets_are_redacted_and_long_lines_cut():
    assert error_line(RuntimeError("401 for token hf_abcdefghijklmnop")) == "RuntimeError: 401 for token ***"
    line = error_line(RuntimeError("x" * 2000), limit=100)
    assert len(line) == 100 and line.endswith("…")
