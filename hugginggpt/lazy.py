"""Package attributes imported on first use (PEP 562), so a heavy or broken module costs nothing until
someone asks for what it defines."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, namespace: dict[str, Any], names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``names[attr]`` (a module path) on first access and caches
    the attribute in ``namespace`` (the package's ``globals()``); unknown names raise AttributeError."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
