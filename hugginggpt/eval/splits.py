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
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hugginggpt.errors import HuggingGPTError
from hugginggpt.eval.taskbench import GRAPH_TYPES, TaskBenchSample

SALT = "hugginggpt-taskbench-split-v1:"
TEST_FRACTION = 0.3
SPLITS = ("dev", "test")


def split_key(sample_id: str) -> str:
    """The hash that orders samples within their graph type."""
    return hashlib.sha256((SALT + str(sample_id)).encode("utf-8")).hexdigest()


def split_ids(samples: Iterable[TaskBenchSample], test_fraction: float = TEST_FRACTION) -> dict[str, list[str]]:
    """``{"dev": [...], "test": [...]}``: sample ids, stratified by graph type (see the module doc)."""
    if not 0 < test_fraction < 1:
        raise HuggingGPTError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    out: dict[str, list[str]] = {"dev": [], "test": []}
    samples = list(samples)
    for graph_type in GRAPH_TYPES:
        ids = sorted((s.id for s in samples if s.type == graph_type), key=split_key)
        cut = math.ceil(test_fraction * len(ids))
        out["test"].extend(ids[:cut])
        out["dev"].extend(ids[cut:])
    return out


def select_split(samples: Sequence[TaskBenchSample], split: str | None) -> list[TaskBenchSample]:
    """The samples of ``split`` (dev | test), in their dataset order; all of them for None / "all"."""
    if split in (None, "all"):
        return list(samples)
    if split not in SPLITS:
        raise HuggingGPTError(f"--split: unknown split {split!r} (choose dev, test or all)")
    wanted = set(split_ids(samples)[split])
    return [s for s in samples if s.id in wanted]


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


def write_split(samples: Sequence[TaskBenchSample], path: str | Path, source: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(split_document(samples, source), indent=1) + "\n", encoding="utf-8")
    return path
