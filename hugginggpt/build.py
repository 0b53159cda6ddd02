"""Assembly from settings: the controller LLM, the model catalog, the task tools and an agent, made
the one way the CLI and the server both use; and the agent contract's input they hand it.

``make_llm`` and ``make_agent`` are the seams: tests and embedding applications replace the
controller or the agent here, without a fake model on the command line.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from hugginggpt.config import AGENT_CLASSES, Settings
from hugginggpt.errors import HuggingGPTError


def make_llm(settings: Settings) -> Any:
    """The controller chat model for these settings."""
    from hugginggpt.llm import load_llm

    return load_llm(settings.llm_spec(), base_url=settings.base_url)


def make_catalog(settings: Settings) -> Any:
    """The model catalog (shipped list + HF cache) with the settings' local model folders registered."""
    from hugginggpt.tools.catalog import ModelCatalog

    catalog = ModelCatalog()
    for task, folder in settings.local_model_entries():
        catalog.register_local(folder, task=task, preferred=True)  # the user named it: it runs the task
    return catalog


def offer_controller(catalog: Any, llm: Any) -> None:
    """An embedded GGUF controller also runs the GGUF text tasks (summarization, translation...) when
    no other local model can: the same loaded model, no second copy."""
    path = getattr(llm, "model_path", None)
    if path:
        from hugginggpt.tools.executors.local_tasks.gguf_text import register_controller

        register_controller(catalog, path)


def make_tools(settings: Settings, catalog: Any = None) -> list[Any]:
    """The task tools, running on the executor the settings ask for (policy and remote endpoint)."""
    from hugginggpt.tools import build_tools, default_executor

    executor = default_executor(catalog=catalog, policy=settings.execution, endpoint=settings.endpoint)
    return build_tools(executor=executor, catalog=catalog)


def make_agent(settings: Settings, llm: Any, *, catalog: Any = None, tools: list[Any] | None = None) -> Any:
    """The agent the settings name, with the task tools and the run folder (``catalog`` and ``tools``:
    ones already made for these settings, shared between agents, e.g. by the server)."""
    module_name, class_name = AGENT_CLASSES[settings.agent]
    try:
        agent_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError):
        raise HuggingGPTError(f"the {settings.agent} agent ({class_name}) is not available in this installation") from None
    if catalog is None:
        catalog = make_catalog(settings)
    offer_controller(catalog, llm)
    options: dict[str, Any] = {"tools": tools if tools is not None else make_tools(settings, catalog)}
    accepted = inspect.signature(agent_class).parameters
    if "catalog" in accepted:  # model selection sees the same models the tools can run
        options["catalog"] = catalog
    if settings.trace_dir:
        if "workspace_root" not in accepted:
            raise HuggingGPTError(f"the {settings.agent} agent does not support --trace-dir")
        options["workspace_root"] = settings.trace_dir
    return agent_class(llm, **options)


def agent_input(text: str, history: list[Any], files: list[str]) -> dict[str, Any]:
    """The agent contract's input; ``files`` (user inputs the tools may read) only when there are some."""
    request: dict[str, Any] = {"input": text, "chat_history": history}
    if files:
        request["files"] = files
    return request
