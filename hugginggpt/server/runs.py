"""The server's one run lifecycle: admission, a FIFO queue for the shared models, events kept for
replay, timeouts, cancellation, and removal after the retention time.

A run's events are the agent's stage events (strings cut where the trace cuts them, ``files`` links
added where they name files of the run), then one ``{"event": "end", "status": "done"|"failed"|
"cancelled", "error": ...}``; the paths of the run's files in them are the URLs the server serves the
files at (``stages.Links``). Everything a run reads or writes lives in its folder
``<runs_dir>/<run id>/`` (uploads in ``uploads/``, the agent's workspace beside them, and ``run.json``,
the run's record once it has ended), which goes away with the run.

A request is admitted before its body is read (``RunRegistry.admitted``): a place among the runs and
its body's bytes among the uploads in flight, or 429; a stopping server answers 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from hugginggpt.agent.events import FINAL, RESPONSE_DELTA
from hugginggpt.agent.trace import TRACE_TEXT_CHARS
from hugginggpt.errors import error_line
from hugginggpt.llm.fair_lock import arrival_order, request_done
from hugginggpt.server.agents import AgentPool
from hugginggpt.server.errors import ApiError
from hugginggpt.server.settings import ServerSettings
from hugginggpt.server.stages import Links, run_files, stage_events
from hugginggpt.server.wire import wire_bytes
from hugginggpt.tools.resources.atomic import atomic_write
from hugginggpt.tools.results import clip_values

log = logging.getLogger("hugginggpt.server")

_RUN_FOLDER = re.compile(r"[0-9a-f]{32}")
QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
FINISHED = (DONE, FAILED, CANCELLED)
#: The error of the runs a stopping server cancelled.
STOPPED = "cancelled: the server is stopping"
RECORD = "run.json"


def new_run_id() -> str:
    """An unguessable run id (128 random bits, URL- and file-name-safe)."""
    return secrets.token_hex(16)


class Run:
    """One request's run: its status, its events so far (for late subscribers), its result."""

    def __init__(self, run_id: str, agent: str, folder: Path, input: dict[str, Any], plan_only: bool = False,
                 origin: str = ""):
        self.id = run_id
        self.plan_only = plan_only
        self.agent = agent
        self.folder = folder
        self.input = input
        self.status = QUEUED
        self.created = time.time()
        self.finished_at: float | None = None
        self.events: list[dict[str, Any]] = []
        self.output: dict[str, Any] | None = None
        self.error: str | None = None
        self.task: asyncio.Task | None = None
        self._changed = asyncio.Event()
        self.ended = asyncio.Event()
        #: the run's file paths as URLs on the server that the run's request was sent to (``origin``)
        self.links = Links(folder, origin.rstrip("/") + self.base_url)

    @property
    def base_url(self) -> str:
        return f"/runs/{self.id}"

    def public(self, value: Any) -> Any:
        """``value`` (the run's output, or a part of it) as the server answers it: its paths in the run's
        folder as URLs."""
        return self.links.value(value)

    def add(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = asyncio.Event()

    def end(self, status: str, error: str | None = None) -> None:
        self.status, self.error, self.finished_at = status, error, time.time()
        self.add({"event": "end", "status": status, "error": error})
        self.ended.set()
        self.record()

    def record(self) -> None:
        """Write ``run.json`` in the run's folder: its summary, what is left of it after the process."""
        summary = {k: v for k, v in self.summary().items() if k != "events"}
        try:
            # wire_bytes: a lone surrogate a model wrote is U+FFFD here too, as in every answer
            atomic_write(self.folder / RECORD, lambda fh: fh.write(wire_bytes(json.dumps(summary, ensure_ascii=False,
                                                                                         default=str))))
        except OSError as exc:  # a removed or full folder: the run still ends
            log.warning("run %s: cannot write its record: %s", self.id, error_line(exc))

    async def follow(self, start: int = 0, heartbeat_s: float | None = None) -> AsyncIterator[dict[str, Any] | None]:
        """Every event from ``start`` on, waiting for new ones until the run has ended; with
        ``heartbeat_s``, None after each such quiet period (streams send a keep-alive then)."""
        index = start
        while True:
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.ended.is_set():
                return
            try:
                await asyncio.wait_for(self._changed.wait(), heartbeat_s)
            except TimeoutError:
                yield None

    def summary(self) -> dict[str, Any]:
        """GET /runs/{id}: status, and once done the output (answer, plan, selections, results, files)."""
        output = self.output or {}
        shown = self.public({key: output.get(key) for key in ("output", "plan", "selections", "results")})
        return {"id": self.id, "agent": self.agent, "plan_only": self.plan_only, "status": self.status, "error": self.error,
                "created": self.created, "finished": self.finished_at,
                "input": self.public(self.input.get("input")), **shown,
                "files": run_files(output, self.folder, self.base_url),
                "trace": _trace_name(output, self.folder), "events": len(self.events)}


def _trace_name(output: dict[str, Any], folder: Path) -> str | None:
    trace = output.get("trace")
    if not trace:
        return None
    with contextlib.suppress(ValueError):
        return str(Path(trace).resolve().relative_to(folder))
    return None


class Admission:
    """A request admitted before its body is read: its place among the unfinished runs and its body's
    bytes among the uploads in flight (``RunRegistry.admitted``); ``create`` turns the place into its run."""

    def __init__(self, registry: "RunRegistry", body_bytes: int, origin: str):
        self.registry = registry
        self.body_bytes = body_bytes
        self.origin = origin
        self.run: Run | None = None

    def create(self, agent: str | None, *, plan_only: bool = False) -> Run:
        """The request's queued run, with its folder (an unknown agent: 404, and nothing is made)."""
        registry = self.registry
        name = registry.agents.resolve(agent)
        run_id = new_run_id()
        folder = registry.settings.runs_dir / run_id
        folder.mkdir(parents=True)
        self.run = Run(run_id, name, folder.resolve(), {}, plan_only, origin=self.origin)
        registry.runs[run_id] = self.run
        registry.admitting -= 1
        return self.run

    def body_read(self) -> None:
        """The body is in (stored, or refused): its bytes no longer count as in flight."""
        self.registry.upload_bytes -= self.body_bytes
        self.body_bytes = 0

    def close(self) -> None:
        self.body_read()
        if self.run is None:
            self.registry.admitting -= 1


class RunRegistry:
    """All runs of this process. ``max_active`` run at once, later ones wait in arrival order
    (``asyncio.Semaphore`` wakes waiters first-in first-out), so a long queue is served fairly; past
    ``max_active + max_queued`` unfinished runs (and requests admitted whose body is still coming),
    or past ``upload_bytes_in_flight`` bytes of bodies still coming, new requests get 429 with
    Retry-After. Each run's LLM calls carry its arrival (``llm.fair_lock.arrival_order``): a model that
    answers one call at a time answers the oldest run's first."""

    def __init__(self, settings: ServerSettings, agents: AgentPool):
        self.settings = settings
        self.agents = agents
        self.runs: dict[str, Run] = {}
        self.admitting = 0
        self.upload_bytes = 0
        self.stopping = False
        self._slots = asyncio.Semaphore(settings.max_active)
        self._reaper: asyncio.Task | None = None

    # ------------------------------------------------------------ admission

    def unfinished(self) -> int:
        return sum(1 for run in self.runs.values() if run.status not in FINISHED) + self.admitting

    def _busy(self, message: str) -> ApiError:
        """429 before the body was read: the connection is closed after it (the rest of the body unread)."""
        return ApiError(429, message, code="rate_limited",
                        headers={"Retry-After": str(self.settings.retry_after_s), "Connection": "close"})

    @contextlib.contextmanager
    def admitted(self, body_bytes: int, origin: str = "") -> Iterator[Admission]:
        """Admit a request whose body holds at most ``body_bytes``, before reading it: 503 while the
        server stops; 429 when the runs and the queue are full, or when its body would take the bytes
        in flight past their limit. The admission ends with the block (its place is given back unless
        it made a run; its bytes once the body is read)."""
        if self.stopping:
            raise stopping_error(self.settings.retry_after_s)
        limit = self.settings.max_active + self.settings.max_queued
        if self.unfinished() >= limit:
            raise self._busy(f"the server is busy ({limit} requests running or queued); retry later")
        budget = self.settings.upload_bytes_in_flight
        if self.upload_bytes + body_bytes > budget:
            raise self._busy(f"the server is receiving {self.upload_bytes} bytes of other requests (at most "
                             f"{budget} at once) and this one may send {body_bytes}; retry later")
        self.admitting += 1
        self.upload_bytes += body_bytes
        admission = Admission(self, body_bytes, origin)
        try:
            yield admission
        finally:
            admission.close()

    def create(self, agent: str | None, *, plan_only: bool = False, origin: str = "") -> Run:
        """A new queued run with its folder, admitted as a request without a body (``admitted``)."""
        with self.admitted(0, origin) as admission:
            return admission.create(agent, plan_only=plan_only)

    def start(self, run: Run, input: dict[str, Any]) -> Run:
        """Start ``run`` on the agent contract's ``input`` (its files already in the run's folder)."""
        run.input = input
        run.task = asyncio.create_task(self._execute(run), name=f"run-{run.id}")
        return run

    def discard(self, run: Run) -> None:
        """Forget a run that never started (e.g. its upload was refused) and remove its folder."""
        self.runs.pop(run.id, None)
        shutil.rmtree(run.folder, ignore_errors=True)

    def get(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise ApiError(404, f"no run {run_id!r} (unknown, or removed after the retention time)",
                           code="run_not_found")
        return run

    # ------------------------------------------------------------ the run

    async def _execute(self, run: Run) -> None:
        status, error = DONE, None
        arrival_order(run.created)  # this task's LLM calls (and the threads it starts) carry its arrival
        try:
            async with self._slots:
                run.status = RUNNING
                agent = await asyncio.to_thread(self.agents.for_run, run.agent, run.folder, plan_only=run.plan_only)
                async with asyncio.timeout(self.settings.request_timeout):
                    await self._consume(run, agent)
                if run.output is None:
                    status, error = FAILED, "the agent stopped without a final output"
        except asyncio.CancelledError:
            status, error = CANCELLED, STOPPED if self.stopping else "cancelled"
        except TimeoutError:
            status, error = FAILED, f"timed out after {self.settings.request_timeout:g} s"
        except ApiError as exc:
            status, error = FAILED, exc.message
        except Exception as exc:  # noqa: BLE001 - the run fails, the server goes on
            log.warning("run %s failed: %s: %s", run.id, type(exc).__name__, exc)
            status, error = FAILED, error_line(exc)
        finally:
            request_done(run.created)
            run.end(status, error)

    async def _consume(self, run: Run, agent: Any) -> None:
        stream = stage_events(agent, run.input, {"run_name": f"hugginggpt-serve-{run.id[:8]}"})
        try:
            async for event in stream:
                event = clip_values(event, TRACE_TEXT_CHARS)  # kept for the run's life: strings cut as in the trace
                if event.get("event") == RESPONSE_DELTA:  # the answer in pieces: a path may be cut between two
                    text = run.links.feed(event.get("text") or "")
                    if text:
                        run.add({**event, "text": text})
                    continue
                rest = run.links.flush()
                if rest:
                    run.add({"event": RESPONSE_DELTA, "text": rest})
                if event.get("event") == FINAL:
                    run.output = event.get("output")
                files = run_files({k: v for k, v in event.items() if k != "t"}, run.folder, run.base_url)
                shown = run.public(event)
                run.add({**shown, "files": files} if files else shown)
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:  # cancels the agent's run when it has not finished
                with contextlib.suppress(BaseException):
                    await closer()

    def cancel(self, run: Run) -> bool:
        """Cancel a queued or running run; False when it had already finished."""
        if run.status in FINISHED or run.task is None:
            return False
        run.task.cancel()
        return True

    async def wait(self, run: Run) -> Run:
        await run.ended.wait()
        return run

    # ------------------------------------------------------------ retention

    def start_reaper(self) -> None:
        """Remove run folders an earlier process left past the retention time, then keep reaping."""
        now = time.time()
        for folder in self.settings.runs_dir.iterdir():
            if _RUN_FOLDER.fullmatch(folder.name) and now - folder.stat().st_mtime >= self.settings.keep_runs_s:
                shutil.rmtree(folder, ignore_errors=True)
        self._reaper = asyncio.create_task(self._reap_forever(), name="run-reaper")

    async def _reap_forever(self) -> None:
        interval = min(30.0, max(0.5, self.settings.keep_runs_s / 4))
        while True:
            await asyncio.sleep(interval)
            self.reap()

    def reap(self, now: float | None = None) -> list[str]:
        """Remove finished runs older than the retention time, and the oldest past ``max_kept_runs``."""
        now = time.time() if now is None else now
        finished = sorted((r for r in self.runs.values() if r.status in FINISHED and r.finished_at),
                          key=lambda r: r.finished_at)
        expired = [r for r in finished if now - r.finished_at >= self.settings.keep_runs_s]
        surplus = len(finished) - len(expired) - self.settings.max_kept_runs
        if surplus > 0:
            expired += [r for r in finished if r not in expired][:surplus]
        for run in expired:
            self.runs.pop(run.id, None)
            shutil.rmtree(run.folder, ignore_errors=True)
        return [r.id for r in expired]

    async def stop(self) -> None:
        """The server is stopping: admit no more requests (503), cancel every unfinished run (each ends
        ``cancelled``, its record and its agent's trace written), and wait for them to end."""
        self.stopping = True
        tasks = [r.task for r in self.runs.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=self.settings.stop_grace_s)

    async def close(self) -> None:
        """Server shutdown: stop the reaper, cancel unfinished runs and wait for their traces."""
        if self._reaper is not None:
            self._reaper.cancel()
        await self.stop()


def stopping_error(retry_after_s: int) -> ApiError:
    """The answer of a server that is stopping (503, JSON, with Retry-After)."""
    return ApiError(503, "the server is stopping; retry later", code="server_stopping",
                    headers={"Retry-After": str(retry_after_s)})
