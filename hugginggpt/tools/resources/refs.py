"""Recognising ``<resource>-N`` references: a plan's pointer to the output of task N.

Accepted spellings (case-insensitive, surrounding spaces ignored): the canonical ``<resource>-N``
and the forms LLMs commonly drift into, ``<resource-N>``, ``<resource>N`` and ``<resource_N>``
(a missing closing ``>`` is tolerated).
Anything else (``resource-1``, ``$1``) is not a reference.
"""

from __future__ import annotations

import re

#: One reference; group ``id`` is the task id N (a closing ``>`` after N is part of the match).
RESOURCE_REF = re.compile(r"<\s*resource\s*(?:>\s*-?|[-_])\s*(?P<id>\d+)(?:\s*>)?", re.IGNORECASE)


def is_resource_ref(value: object) -> bool:
    """Whether ``value`` is exactly one reference (a string holding nothing else)."""
    return isinstance(value, str) and RESOURCE_REF.fullmatch(value.strip()) is not None


def resource_ref_id(value: object) -> int | None:
    """The task id a whole-string reference points to, or None when ``value`` is not one."""
    if not isinstance(value, str):
        return None
    match = RESOURCE_REF.fullmatch(value.strip())
    if match is None:
        return None
    return int(match.group("id"))


def contains_resource_ref(value: object) -> bool:
    """Whether a reference appears anywhere in ``value`` (a string that was never substituted)."""
    return isinstance(value, str) and RESOURCE_REF.search(value) is not None
