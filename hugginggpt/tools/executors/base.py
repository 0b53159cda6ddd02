"""What every executor does: run one task call on one model and return the result envelope."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hugginggpt.tools.resources import Workspace
    from hugginggpt.tools.table import TaskSpec


@dataclass
class TaskCall:
    """One task to run: validated arguments (media already resolved to local paths) and a model."""

    task: "TaskSpec"
    args: dict[str, Any]
    workspace: "Workspace"
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


class Executor(ABC):
    """Runs task calls. Subclasses raise ``hugginggpt.errors.TaskError`` subclasses, never bare errors."""

    name: str = "executor"

    @abstractmethod
    def can_run(self, task: str, model: str | None) -> bool:
        """Whether this executor can run ``task`` on ``model`` (None: its default model) without trying."""

    def why_not(self, task: str, model: str | None) -> str:
        """Why ``can_run(task, model)`` is False, in words that say what to install or configure
        ("" when it can run). Executors that know more say more."""
        return "" if self.can_run(task, model) else f"the {self.name} executor cannot run it"

    @abstractmethod
    def run(self, call: TaskCall) -> dict[str, Any]:
        """Run the call and return the result envelope (see docs/ARCHITECTURE.md)."""

    async def arun(self, call: TaskCall) -> dict[str, Any]:
        """Async variant; the default runs ``run`` in a worker thread so the event loop stays free."""
        return await asyncio.to_thread(self.run, call)
