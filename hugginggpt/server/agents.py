"""The agents a server offers, built once and shared by every request.

From settings, the controller LLM, the model catalog and the task tools are made once (by
``hugginggpt.build``, as the CLI makes them) and every agent gets the same ones, so models load once.
Tests and embedding applications pass ready agents instead.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hugginggpt.config import AGENTS
from hugginggpt.errors import error_line
from hugginggpt.server.errors import ApiError

log = logging.getLogger("hugginggpt.server")


class AgentPool:
    """Agents by name (``global``, ``react``, ``tools``), each built on first use by ``factory``."""

    def __init__(self, agents: dict[str, Any] | None = None, *, factory: Callable[[str], Any] | None = None,
                 names: tuple[str, ...] = AGENTS, default: str = "global"):
        self._agents = dict(agents or {})
        self._factory = factory
        self.names = tuple(self._agents) if factory is None else tuple(names)
        if default not in self.names:
            raise ValueError(f"default agent {default!r} is not one of {', '.join(self.names)}")
        self.default = default
        self._lock = threading.Lock()

    def resolve(self, name: str | None) -> str:
        """The agent's name for a request's ``agent``/``model`` field (None or "hugginggpt": the default)."""
        if name in (None, "", "hugginggpt"):
            return self.default
        if name.startswith("hugginggpt-"):
            name = name[len("hugginggpt-"):]
        if name not in self.names:
            raise ApiError(404, f"unknown agent {name!r}: this server offers {', '.join(self.names)} "
                                "(or 'hugginggpt' for the default)", code="model_not_found")
        return name

    def get(self, name: str) -> Any:
        """The shared agent called ``name`` (built on first use; blocking, so call it off the event loop)."""
        with self._lock:
            if name not in self._agents:
                self._agents[name] = warm(self._factory(name))
            return self._agents[name]

    def for_run(self, name: str, folder: Path, *, plan_only: bool = False) -> Any:
        """The shared agent, with its run folders under ``folder``: a shallow copy sharing the LLM,
        tools, catalog and compiled schemas, so one run's files never land in another's folder.
        ``plan_only``: stop after planning and model selection where the agent can (global)."""
        agent = copy.copy(self.get(name))
        if hasattr(agent, "workspace_root"):
            agent.workspace_root = Path(folder)
        if plan_only and hasattr(agent, "execute"):
            agent.execute = False
        return agent


def warm(agent: Any) -> Any:
    """Build what an agent makes lazily (tools, task descriptions) once, so per-run copies share it."""
    for attribute in ("tools", "task_specs"):
        try:
            getattr(agent, attribute, None)
        except Exception:  # noqa: BLE001 - the first run reports the same problem with context
            break
    return agent


def read_prompts_ahead(agent: Any) -> int:
    """The agent's ``warm_up``: its controller reads the static prompt it will be asked with, so the first
    request does not wait for it. The tokens read (0: nothing to read ahead); a failure is logged, not
    raised (the first request then reads the prompt itself)."""
    warm_up = getattr(agent, "warm_up", None)
    if not callable(warm_up):
        return 0
    started = time.perf_counter()
    try:
        tokens = int(warm_up() or 0)
    except Exception as exc:  # noqa: BLE001 - only a slower first request
        log.warning("the controller could not read the planning prompt ahead: %s", error_line(exc))
        return 0
    if tokens:
        log.info("the controller read the planning prompt ahead (%d tokens, %.1f s)", tokens, time.perf_counter() - started)
    return tokens


def pool_from_settings(settings: Any) -> AgentPool:
    """Agents on the controller and tools the settings describe, all sharing one LLM, catalog and tools."""
    from hugginggpt.build import make_agent, make_catalog, make_llm, make_tools

    shared: dict[str, Any] = {}
    lock = threading.Lock()

    def build(name: str) -> Any:
        with lock:
            if not shared:
                shared["llm"] = make_llm(settings)
                shared["catalog"] = make_catalog(settings)
                shared["tools"] = make_tools(settings, shared["catalog"])
        return make_agent(replace(settings, agent=name), shared["llm"], catalog=shared["catalog"],
                          tools=shared["tools"])

    return AgentPool(factory=build, default=settings.agent)
