"""Requests as users write them, each with the plan a careful person makes, and how close a planner gets.

The set (``benchmarks/data/real_requests.jsonl``, JSON lines) holds one request per line:
``{"id", "request", "files", "history", "lang", "source", "plan", "note"}`` where ``plan`` is the gold
plan in the agent contract's format (``[{"task", "id", "args"}]``, ``<resource>-N`` references) and
``history`` the earlier turns (``[{"role", "content"}]``). All tasks of the task table are offered, as
the product offers them.

A translation's ``source`` is ``translation:ID``, the id of the English request it says again.

The split is fixed by a rule that adding requests never changes for the requests already there:

- the set's first 169 requests (``r001``-``r169``, ``V1_IDS``) keep the part the first rule gave them:
  within each language group (English, other), ordered by ``sha256(SALT + id)``, the first half
  (rounded up) is the test part;
- every later request is in the test part when ``sha256(SALT_V2 + group id)``, read as a fraction,
  is below one half, where the group id is the id of the English request a translation translates,
  else the request's own id; a translation of a first-version request takes that request's part.
  So a request and its translations are always in the same part.

Scores, per request then summed over a set (micro):
- exact: the plan's task list equals the gold's as a multiset (order aside);
- n-F1: tasks as multisets; e-F1: edges ``(reading task, read task)`` as multisets, from the
  ``<resource>-N`` references, as TaskBench scores edges.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggpt.errors import DatasetError
from hugginggpt.eval.splits import hash_fraction, in_split, stratified_split
from hugginggpt.tools.resources.refs import ref_ids

SALT = "hugginggpt-real-requests-split-v1:"
SALT_V2 = "hugginggpt-real-requests-split-v2:"
TEST_FRACTION = 0.5
#: The requests of the set's first version, split by its rule among themselves.
V1_IDS = frozenset(f"r{n:03d}" for n in range(1, 170))
TRANSLATION = "translation:"


@dataclass(frozen=True)
class RealRequest:
    """One request of the set, with its gold plan."""

    id: str
    request: str
    plan: list[dict[str, Any]]
    files: list[str] = field(default_factory=list)
    history: list[dict[str, str]] = field(default_factory=list)
    lang: str = "en"
    source: str = ""

    @property
    def group(self) -> str:
        """``en`` or ``other``: the split is stratified by it."""
        return "en" if self.lang == "en" else "other"

    @property
    def split_group(self) -> str:
        """The id whose part this request takes: the request a translation translates, else its own."""
        return self.source.removeprefix(TRANSLATION) if self.source.startswith(TRANSLATION) else self.id


def load_real_requests(path: str | Path) -> list[RealRequest]:
    """The set in ``path``; ``DatasetError`` naming the line when one cannot be read."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            rows.append(RealRequest(id=str(data["id"]), request=data["request"], plan=list(data["plan"]),
                                    files=list(data.get("files") or []), history=list(data.get("history") or []),
                                    lang=data.get("lang", "en"), source=data.get("source", "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{path}:{number}: not a real-request row ({type(exc).__name__}: {exc})") from None
    return rows


def split_ids(requests: Iterable[RealRequest]) -> dict[str, list[str]]:
    """``{"dev": [...], "test": [...]}`` by the rule of the module docstring (``requests``: the whole
    set, since the first-version requests are split among themselves)."""
    requests = list(requests)
    parts = stratified_split([r for r in requests if r.id in V1_IDS], lambda r: r.group, ("en", "other"),
                             salt=SALT, test_fraction=TEST_FRACTION)
    first_test = set(parts["test"])
    for request in requests:
        if request.id in V1_IDS:
            continue
        group = request.split_group
        test = group in first_test if group in V1_IDS else hash_fraction(group, SALT_V2) < TEST_FRACTION
        parts["test" if test else "dev"].append(request.id)
    return parts


def select_split(requests: Sequence[RealRequest], split: str | None) -> list[RealRequest]:
    """The requests of ``split`` (dev | test) in file order; all for None / "all"."""
    return in_split(requests, split, split_ids)


def _tasks(plan: Sequence[Mapping[str, Any]]) -> Counter:
    return Counter(str(step.get("task")) for step in plan)


def _edges(plan: Sequence[Mapping[str, Any]]) -> Counter:
    names = {step.get("id"): str(step.get("task")) for step in plan}
    edges: Counter = Counter()
    for step in plan:
        text = json.dumps(step.get("args") or {}, ensure_ascii=False)
        for source in set(ref_ids(text)):
            if source in names and source != step.get("id"):
                edges[(names[source], str(step.get("task")))] += 1
    return edges


def _f1(hits: int, predicted: int, gold: int) -> float:
    if predicted == 0 and gold == 0:
        return 1.0
    return 2 * hits / (predicted + gold) if predicted + gold else 0.0


def score_plans(gold: Mapping[str, Sequence[Mapping[str, Any]]],
                predicted: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, float | int]:
    """Exact task-list accuracy, n-F1 and e-F1 of ``predicted`` plans against ``gold`` plans (both by
    request id; a request without a prediction counts as an empty plan)."""
    exact = 0
    n_hits = n_pred = n_gold = e_hits = e_pred = e_gold = 0
    for request_id, gold_plan in gold.items():
        plan = predicted.get(request_id) or []
        want, have = _tasks(gold_plan), _tasks(plan)
        exact += want == have
        n_hits += sum((want & have).values())
        n_pred += sum(have.values())
        n_gold += sum(want.values())
        want_e, have_e = _edges(gold_plan), _edges(plan)
        e_hits += sum((want_e & have_e).values())
        e_pred += sum(have_e.values())
        e_gold += sum(want_e.values())
    count = len(gold)
    return {"requests": count, "exact": round(exact / count, 4) if count else 0.0,
            "n_f1": round(_f1(n_hits, n_pred, n_gold), 4), "e_f1": round(_f1(e_hits, e_pred, e_gold), 4)}
