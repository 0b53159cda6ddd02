"""Typed errors: each names the task (where there is one) and the cause, so users see one clear line.

Errors raised while a tool runs subclass LangChain's ``ToolException``, so any LangChain agent
(``handle_tool_error=True``) turns them into an observation instead of a crash. ``error_line`` is
the one way any exception is shown to a person or a model.
"""

from __future__ import annotations

from langchain_core.tools import ToolException
from pydantic import ValidationError

from hugginggpt.redact import redact

#: The longest error line; longer ones are cut with an ellipsis.
ERROR_LINE_CHARS = 500


class HuggingGPTError(Exception):
    """Base class of every error this library raises on purpose."""


class TaskTableError(HuggingGPTError):
    """The task table (a data file) is malformed."""


class UnknownTaskError(HuggingGPTError, KeyError):
    """A task name that is not in the task table."""

    def __init__(self, task: str, known: list[str] | None = None):
        self.task = task
        hint = ""
        if known:
            import difflib

            close = difflib.get_close_matches(task, known, n=3)
            if close:
                hint = f" (did you mean {', '.join(close)}?)"
        super().__init__(f"unknown task {task!r}{hint}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class TaskError(HuggingGPTError, ToolException):
    """A task could not run: carries the task name and a short cause."""

    def __init__(self, task: str | None, cause: str):
        self.task = task
        self.cause = cause
        super().__init__(f"{task}: {cause}" if task else cause)


class ResourceError(TaskError):
    """An input file or URL is not allowed, unreadable, too large, or not of the expected kind."""


class ModelLoadError(TaskError):
    """A model could not be found or loaded."""


class RemoteInferenceError(TaskError):
    """A remote inference endpoint answered with an error, or did not answer in time."""

    def __init__(self, task: str | None, cause: str, status_code: int | None = None):
        self.status_code = status_code
        super().__init__(task, cause)


class AgentInputError(HuggingGPTError, TypeError):
    """An agent was given something other than a string or ``{"input": str, ...}``."""


class PlanError(HuggingGPTError):
    """A task plan that cannot be repaired."""


class LLMError(HuggingGPTError):
    """The controller LLM is unreachable, misconfigured, or answered unusably."""


class ConfigError(HuggingGPTError):
    """A settings file or setting that cannot be used (bad TOML, unknown key, wrong value)."""


class DatasetError(HuggingGPTError):
    """A benchmark dataset or predictions file is missing or malformed."""


class InvalidArgumentsError(TaskError):
    """A tool was called with missing, unknown or ill-typed arguments (names each one)."""


def validation_problems(error: ValidationError, noun: str = "argument") -> str:
    """pydantic's errors as ``name: what is wrong; ...``; an unknown or a missing name says so."""
    problems = []
    for err in error.errors():
        name = ".".join(str(part) for part in err["loc"]) or f"{noun}s"
        if err["type"] == "extra_forbidden":
            problems.append(f"{name}: unknown {noun}")
        elif err["type"] == "missing":
            problems.append(f"{name}: required {noun} missing")
        else:
            problems.append(f"{name}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(problems)


def error_line(error: BaseException | str, limit: int = ERROR_LINE_CHARS) -> str:
    """``error`` as one line for a person or a model: the one format of every failure this library shows.

    This library's own errors by their message (it names the task and the cause); pydantic's
    ``ValidationError`` as ``invalid arguments: name: what is wrong; ...``; an ``OSError`` by its
    cause and file; any other exception as ``Type: its first line`` (with the line after it when the
    first ends in ":", a heading that announces the cause: smolagents' "Error in generating model
    output:"); a string as it is. White space folded, secrets redacted, at most ``limit`` characters.
    """
    if isinstance(error, str):
        text = error
    elif isinstance(error, HuggingGPTError):
        text = str(error) or type(error).__name__
    elif isinstance(error, ValidationError):
        text = f"invalid arguments: {validation_problems(error)}"
    elif isinstance(error, OSError) and error.strerror:
        text = f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    else:
        lines = [line for line in str(error).splitlines() if line.strip()]
        first = " ".join(lines[:2]) if len(lines) > 1 and lines[0].rstrip().endswith(":") else (lines or [""])[0]
        text = f"{type(error).__name__}: {first}" if first else type(error).__name__
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
