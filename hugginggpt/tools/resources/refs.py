"""``<resource>-N`` references, a plan's pointer to the output of task N: the one pattern, for everyone.

The canonical spelling is ``<resource>-N`` (``CANONICAL_REF``). What LLMs and datasets write instead
is recognised by ``RESOURCE_REF`` (case-insensitive, spaces inside ignored) and rewritten to the
canonical form by ``canonical_refs``:

- ``<resource>-N``, ``<resource> - N``, ``<resource>N``, ``<resource>-N>`` (a stray closing ``>``);
- ``<resource-N>``, ``<resource_N>``, ``<resource-N`` (the closing ``>`` missing);
- TaskBench's ``<node-N>`` and the same variants with ``node``.

Anything else (``resource-1``, ``$1``, ``<resource>``, ``<resource>--1``) is not a reference.

Both patterns run in linear time: no two repeated parts can match the same text, so a hostile
``<resource>`` followed by 100,000 spaces costs milliseconds, not minutes.
"""

from __future__ import annotations

import re
from typing import Any

#: One reference in any accepted spelling; group ``id`` is the task id N.
RESOURCE_REF = re.compile(
    r"<\s*(?:resource|node)\s*"
    r"(?:>\s*(?:-\s*)?|(?P<dash>[-_])\s*)"  # "<resource>" then an optional "-", or "<resource-" / "<resource_"
    r"(?P<id>\d+)"
    r"(?(dash)(?:\s*>)?|>?)",  # the closing ">" of "<resource-N>"; a stray one after "<resource>-N"
    re.IGNORECASE,
)

#: The canonical ``<resource>-N`` only (what a validated plan holds); group ``id`` (also group 1) is N.
CANONICAL_REF = re.compile(r"<resource>-(?P<id>\d+)")


def canonical_refs(value: Any) -> Any:
    """Rewrite every reference spelling in ``value`` (strings, lists, dicts) to ``<resource>-N``."""
    if isinstance(value, str):
        return RESOURCE_REF.sub(lambda m: f"<resource>-{m.group('id')}", value)
    if isinstance(value, dict):
        return {k: canonical_refs(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical_refs(v) for v in value]
    return value


def ref_ids(text: str) -> list[int]:
    """The task ids of the canonical references in ``text``, in order."""
    return [int(n) for n in CANONICAL_REF.findall(text)]


def contains_resource_ref(value: object) -> bool:
    """Whether a reference appears anywhere in ``value`` (a string that was never substituted)."""
    return isinstance(value, str) and RESOURCE_REF.search(value) is not None
