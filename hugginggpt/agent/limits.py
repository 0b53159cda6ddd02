"""How much one run may do (``RunLimits``) and what it has used so far (``Budget``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class RunLimits:
    """How much one run may do. ``max_repeats``: repeated identical calls tolerated before stopping."""

    max_steps: int = 10
    max_llm_calls: int = 12
    time_budget_s: float = 300
    max_repeats: int = 2

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_llm_calls", "time_budget_s", "max_repeats"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


class Budget:
    """Counts a run's steps, LLM calls, repeats and time; the first limit hit becomes the stop reason."""

    def __init__(self, limits: RunLimits):
        self.limits = limits
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self.steps = 0
        self.llm_calls = 0
        self.repeats = 0
        self.stop_reason: str | None = None

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    @property
    def remaining_s(self) -> float:
        """Seconds left of the time budget (0 once spent): the deadline of a tool call."""
        return max(0.0, self.limits.time_budget_s - self.elapsed_s)

    def run_out_of_time(self) -> None:
        """Stop the run for its time budget (a tool call used up what was left)."""
        self.stop(f"ran out of the time budget of {self.limits.time_budget_s:g} s")

    def stop(self, reason: str) -> None:
        """Record why the run stops; the first reason wins."""
        with self._lock:
            self.stop_reason = self.stop_reason or reason

    def check_time(self) -> bool:
        """False (and stopped) once the wall-clock budget is spent."""
        if self.elapsed_s > self.limits.time_budget_s:
            self.run_out_of_time()
        return self.stop_reason is None

    def take_llm_call(self) -> bool:
        """Reserve one LLM call; False (and stopped) when none is left or time is up."""
        if not self.check_time():
            return False
        with self._lock:
            if self.llm_calls >= self.limits.max_llm_calls:
                self.stop_reason = self.stop_reason or (
                    f"reached the limit of {self.limits.max_llm_calls} LLM calls")
                return False
            self.llm_calls += 1
            return True

    def take_step(self) -> bool:
        """Reserve one step (a tool call, or a ReAct turn answered with an error observation)."""
        if not self.check_time():
            return False
        with self._lock:
            if self.steps >= self.limits.max_steps:
                self.stop_reason = self.stop_reason or f"reached the limit of {self.limits.max_steps} steps"
                return False
            self.steps += 1
            return True

    def note_repeat(self, task: str) -> bool:
        """Count a repeated identical call; False (and stopped) once repeats reach the threshold."""
        with self._lock:
            self.repeats += 1
            if self.repeats >= self.limits.max_repeats:
                self.stop_reason = self.stop_reason or (
                    f"repeated the same {task} call {self.repeats} times without progress")
                return False
            return True
