"""The optional extras of the package, and the one-line error that names the missing one.

A plain ``pip install hugginggpt`` holds the planner, the agents and the remote task execution; each
backend that needs more names its extra when its package is missing, e.g. ``openai:gpt-4o-mini``
without ``langchain-openai``: "the controller openai:gpt-4o-mini needs the 'openai' extra: pip
install 'hugginggpt[openai]'" -- never a bare "No module named 'langchain_openai'".
"""

from __future__ import annotations

import importlib
from types import ModuleType

from hugginggpt.errors import HuggingGPTError

#: The module a feature imports -> the extra (pyproject.toml) that installs it.
EXTRA_OF = {
    "langchain_openai": "openai",
    "langchain_huggingface": "huggingface",
    "llama_cpp": "gguf",
    "fastapi": "server",
    "uvicorn": "server",
    "multipart": "server",
    "mcp": "mcp",
    "langchain_mcp_adapters": "mcp",
    "transformers": "local",
    "torch": "local",
    "soundfile": "local",
    "diffusers": "diffusers",
    "controlnet_aux": "controlnet",
    "matplotlib": "eval",
    "pandas": "eval",
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'hugginggpt[extra]'``."""
    return f"pip install 'hugginggpt[{extra}]'"


def missing_extra(what: str, module: str, exc: ImportError | None = None,
                  error: type[HuggingGPTError] = HuggingGPTError) -> HuggingGPTError:
    """The error for ``what`` (a feature, e.g. "the controller openai:gpt-4o-mini") whose ``module``
    could not be imported: it names the extra and the command that installs it."""
    extra = EXTRA_OF.get(module.split(".")[0])
    missing = getattr(exc, "name", None) or module
    if extra is None:
        return error(f"{what} needs the {missing!r} package: pip install {missing}")
    detail = "" if missing.split(".")[0] == module.split(".")[0] else f" ({missing} is missing)"
    return error(f"{what} needs the {extra!r} extra: {install_hint(extra)}{detail}")


def require(module: str, what: str, error: type[HuggingGPTError] = HuggingGPTError) -> ModuleType:
    """``import module``, or raise ``error`` naming the extra that installs it (``missing_extra``)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(what, module, exc, error) from None
