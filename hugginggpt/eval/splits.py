"""A fixed development / test split of a TaskBench domain, so figures are reported on requests
nobody tuned on.

The rule, deterministic and independent of file order: within each graph type (single, chain,
dag), samples are ordered by ``sha256(SALT + id)`` and the first ``ceil(TEST_FRACTION * n)`` of
each type are the test part; the rest is the development part. Adding samples to the data never
moves an existing sample from test to dev unless it changes that type's count. Prompts,
demonstrations and rules are tuned on ``dev`` only; ``test`` is for the reported figures.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchSample

SALT = "hugginggpt-taskbench-split-v1:"
TEST_FRACTION = 0.3
SPLITS = ("dev", "test")
Item = TypeVar("Item")


def split_key(sample_id: str, salt: str = SALT) -> str:
    """The hash that orders samples within their graph type (within their stratum, for another ``salt``)."""
    return hashlib.sha256((salt + str(sample_id)).encode("utf-8")).hexdigest()


def hash_fraction(key: str, salt: str) -> float:
    """Where ``key`` falls in [0, 1) by ``sha256(salt + key)``: the same for a key whatever else is split
    with it (a key is in a part of fraction f when this is below f)."""
    return int(split_key(key, salt)[:16], 16) / 16**16


def stratified_split(items: Iterable[Any], stratum: Callable[[Any], str], strata: Sequence[str], *, salt: str,
                     test_fraction: float) -> dict[str, list[str]]:
    """``{"dev": [...], "test": [...]}``: the ids of ``items`` (each with an ``id``). Within each stratum
    (``stratum(item)``, in the order of ``strata``) ids are ordered by ``sha256(salt + id)`` and the first
    ``ceil(test_fraction * n)`` are the test part, the rest the development part."""
    if not 0 < test_fraction < 1:
        raise HuggingGPTError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    out: dict[str, list[str]] = {"dev": [], "test": []}
    items = list(items)
    for group in strata:
        ids = sorted((item.id for item in items if stratum(item) == group), key=lambda i: split_key(i, salt))
        cut = math.ceil(test_fraction * len(ids))
        out["test"].extend(ids[:cut])
        out["dev"].extend(ids[cut:])
    return out


def split_ids(samples: Iterable[TaskBenchSample], test_fraction: float = TEST_FRACTION) -> dict[str, list[str]]:
    """``{"dev": [...], "test": [...]}``: sample ids, stratified by graph type (see the module doc)."""
    return stratified_split(samples, lambda s: s.type, GRAPH_TYPES, salt=SALT, test_fraction=test_fraction)


def in_split(items: Sequence[Item], split: str | None,
             ids: Callable[[Sequence[Item]], dict[str, list[str]]]) -> list[Item]:
    """The items of ``split`` (dev | test) by the split ``ids(items)`` makes, in their order; all of them
    for None / "all"."""
    if split in (None, "all"):
        return list(items)
    if split not in SPLITS:
        raise HuggingGPTError(f"--split: unknown split {split!r} (choose dev, test or all)")
    wanted = set(ids(items)[split])
    return [item for item in items if item.id in wanted]


def select_split(samples: Sequence[TaskBenchSample], split: str | None) -> list[TaskBenchSample]:
    """The samples of ``split`` (dev | test), in their dataset order; all of them for None / "all"."""
    return in_split(samples, split, split_ids)


def split_document(samples: Sequence[TaskBenchSample], source: str) -> dict[str, Any]:
    """The split as a JSON document (written to the repository, see ``docs/results/splits``)."""
    ids = split_ids(samples)
    by_id = {s.id: s for s in samples}
    counts = {part: {t: sum(1 for i in ids[part] if by_id[i].type == t) for t in GRAPH_TYPES} for part in SPLITS}
    return {
        "source": source,
        "rule": (f"within each graph type, samples ordered by sha256({SALT!r} + id); the first "
                 f"ceil({TEST_FRACTION} * n) are test, the rest dev (hugginggpt.eval.splits)"),
        "counts": counts,
        "dev": ids["dev"],
        "test": ids["test"],
    }

