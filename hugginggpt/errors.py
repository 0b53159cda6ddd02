"""Typed errors: each names the task (where there is one) and the cause, so users see one clear line.

Errors raised while a tool runs subclass LangChain's ``ToolException``, so any LangChain agent
(``handle_tool_error=True``) turns them into an observation instead of a crash.
"""

from __future__ import annotations

from langchain_core.tools import ToolException


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
