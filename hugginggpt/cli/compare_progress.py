"""Progress of `hugginggpt compare` on stderr: per agent (and critic pass), the requests done and failed,
requests per minute and the time left.

On a terminal a rich progress bar updates in place; otherwise (pipes, logs) plain lines, at most one
every ``every`` seconds and one when the pass ends, so a long run's log stays readable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn


def rate_and_eta(done: int, total: int, seconds: float) -> tuple[float | None, float | None]:
    """Requests per minute so far and the seconds left at that pace (None before the first request)."""
    if done <= 0 or seconds <= 0:
        return None, None
    per_minute = done * 60 / seconds
    return per_minute, (total - done) * 60 / per_minute


def clock_text(seconds: float | None) -> str:
    """``1h02m``, ``4m05s``, ``12s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ComparisonProgress:
    """Makes one bar per pass: ``progress(label, total, resumed)`` (``Comparison.progress``)."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None, every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal if live is None else live
        self.every = every
        self.clock = clock

    def __call__(self, label: str, total: int, resumed: int) -> Any:
        if self.live:
            return _LiveBar(self, label, total, resumed)
        return _PlainBar(self, label, total, resumed)


class _Counts:
    def __init__(self, owner: ComparisonProgress, label: str, total: int, resumed: int):
        self.owner, self.label, self.total, self.resumed = owner, label, total, resumed
        self.done = self.failed = 0
        self.started = owner.clock()

    def stats(self) -> str:
        per_minute, eta = rate_and_eta(self.done, self.total, self.owner.clock() - self.started)
        rate = "?" if per_minute is None else f"{per_minute:.1f}"
        return f"{self.failed} failed, {rate} req/min, ETA {clock_text(eta)}"


class _PlainBar(_Counts):
    def __init__(self, owner: ComparisonProgress, label: str, total: int, resumed: int):
        super().__init__(owner, label, total, resumed)
        self.last_line: float | None = None
        before = f" ({resumed} done before)" if resumed else ""
        self._print(f"{label}: {total} request(s) to run{before}")

    def update(self, failed: bool) -> None:
        self.done += 1
        self.failed += int(failed)
        now = self.owner.clock()
        if self.done == self.total or self.last_line is None or now - self.last_line >= self.owner.every:
            self.last_line = now
            self._print(f"{self.label}: {self.done}/{self.total} done, {self.stats()}")

    def close(self) -> None:
        pass

    def _print(self, line: str) -> None:
        self.owner.console.print(line, markup=False, highlight=False, soft_wrap=True)


class _LiveBar(_Counts):
    def __init__(self, owner: ComparisonProgress, label: str, total: int, resumed: int):
        super().__init__(owner, label, total, resumed)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), console=owner.console, transient=False)
        before = f" ({resumed} done before)" if resumed else ""
        self.task = self.progress.add_task(f"{label}{before}", total=total, stats=self.stats())
        self.progress.start()

    def update(self, failed: bool) -> None:
        self.done += 1
        self.failed += int(failed)
        self.progress.update(self.task, advance=1, stats=self.stats())

    def close(self) -> None:
        self.progress.update(self.task, stats=self.stats())
        self.progress.stop()
