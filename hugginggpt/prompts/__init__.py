"""Prompt templates and few-shot demonstrations, kept as data files so they can be read and tuned
without touching code. Templates use ``$name`` placeholders (``string.Template``), so the JSON in
them needs no escaping."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

PROMPTS_DIR = Path(__file__).parent


@cache
def load_prompt(name: str) -> str:
    """The text of prompt ``name`` (``<name>.md`` or ``<name>.txt`` in this folder)."""
    for suffix in (".md", ".txt"):
        path = PROMPTS_DIR / f"{name}{suffix}"
        if path.is_file():
            return path.read_text(encoding="utf-8").strip()
    known = sorted(p.stem for p in PROMPTS_DIR.iterdir() if p.suffix in (".md", ".txt"))
    raise FileNotFoundError(f"no prompt named {name!r} (known: {', '.join(known)})")


def render_prompt(name: str, **values: Any) -> str:
    """Prompt ``name`` with its ``$placeholders`` filled in."""
    return Template(load_prompt(name)).safe_substitute({k: str(v) for k, v in values.items()})


def load_demonstrations(name: str = "demonstrations") -> list[dict[str, Any]]:
    """Few-shot planning examples: ``[{"kind", "input", "plan"}]`` (a fresh copy each call)."""
    return json.loads(_read(name))


@cache
def _read(name: str) -> str:
    return (PROMPTS_DIR / f"{name}.json").read_text(encoding="utf-8")
