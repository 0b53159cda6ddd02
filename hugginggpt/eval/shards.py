"""A comparison in shards: ``--shard i/n`` runs the i-th of n fixed parts of the chosen requests, and
``merge`` joins the shards' folders into the folder (predictions, tables, plots) one unsharded run
would have written.

Part i of n is every n-th request of the selection starting with the i-th (round robin: parts differ
by at most one request and mix graph types as the selection does); the same arguments give the same
parts, so a shard resumes like any comparison. Each comparison folder holds ``run.json``, its
manifest: the whole selection's request ids in order, the shard, the agents, mode, tools offered,
data folder and notes. ``merge`` checks that the folders are the n shards of one selection and that
each finished its part, then writes every agent's predictions (and critic verdicts) in the
selection's order and the report from them, as the unsharded run does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TypeVar

from hugginggpt.errors import DatasetError, HuggingGPTError
from hugginggpt.eval.jsonl import write_jsonl
from hugginggpt.eval.report import RESAMPLES, Report, critic_path, predictions_path
from hugginggpt.eval.scoring import load_predictions

MANIFEST = "run.json"
T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"2/4"`` -> Shard(2, 4); anything else is one ``HuggingGPTError`` line."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise HuggingGPTError(f"--shard must be i/n with 1 <= i <= n (e.g. 1/4), got {text!r}")
        return cls(int(match[1]), int(match[2]))

    def select(self, items: Sequence[T]) -> list[T]:
        """This shard's part of ``items``: every ``count``-th item from the ``index``-th."""
        return list(items[self.index - 1::self.count])

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def write_manifest(out: Path, manifest: dict[str, Any]) -> Path:
    """``run.json`` in ``out`` (see the module doc)."""
    from hugginggpt.tools.resources.atomic import atomic_write

    text = json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8")
    return atomic_write(Path(out) / MANIFEST, lambda fh: fh.write(text))


def read_manifest(folder: Path) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{folder} is not a comparison folder (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read it ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("requests"), list):
        raise DatasetError(f"{path}: not a comparison manifest")
    return manifest


def merge(folders: Sequence[Path], out: Path, data: str | Path | None = None, resamples: int = RESAMPLES) -> Report:
    """Join the shard folders of one comparison into ``out`` (predictions, critic verdicts, ``run.json``,
    tables); ``data``: the TaskBench folder (default: the one the shards name). Returns the report."""
    from hugginggpt.eval.report import build_report
    from hugginggpt.eval.taskbench import load_taskbench

    folders = [Path(f) for f in folders]
    manifests = [read_manifest(f) for f in folders]
    first = manifests[0]
    shards = [_shard_of(folder, m) for folder, m in zip(folders, manifests)]
    count = shards[0].count
    for folder, manifest, shard in zip(folders, manifests, shards):
        for key in ("requests", "agents", "mode", "tools", "critic"):
            if manifest.get(key) != first.get(key):
                raise HuggingGPTError(f"{folder}: its {key} differ from {folders[0]}'s: not shards of one comparison")
        if shard.count != count:
            raise HuggingGPTError(f"{folder} is shard {shard}, {folders[0]} is shard {shards[0]}: not one comparison")
    indexes = sorted(s.index for s in shards)
    if indexes != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(indexes))
        repeated = sorted({i for i in indexes if indexes.count(i) > 1})
        raise HuggingGPTError(f"merge needs the {count} shards once each: "
                              + "; ".join(filter(None, [missing and f"missing {', '.join(f'{i}/{count}' for i in missing)}",
                                                        repeated and f"given twice {', '.join(f'{i}/{count}' for i in repeated)}"])))
    ids = [str(i) for i in first["requests"]]
    out = Path(out)
    for agent in first["agents"]:
        write_jsonl(predictions_path(out, agent), _joined(folders, shards, ids, predictions_path, agent, "predictions"))
        if first.get("critic"):
            write_jsonl(critic_path(out, agent), _joined(folders, shards, ids, critic_path, agent, "critic verdicts"))
    notes = list(dict.fromkeys(note for m in manifests for note in m.get("notes") or []))
    write_manifest(out, {**first, "shard": None, "notes": notes, "merged": [str(f) for f in folders]})
    dataset = load_taskbench(data if data is not None else first["data"])
    report = build_report(dataset, out, first["agents"], ids, first["mode"], first["tools"], notes, resamples)
    report.write_tables()
    return report


def _shard_of(folder: Path, manifest: dict[str, Any]) -> Shard:
    if not manifest.get("shard"):
        raise HuggingGPTError(f"{folder} is not a shard (it ran without --shard)")
    return Shard.parse(manifest["shard"])


def _joined(folders: Sequence[Path], shards: Sequence[Shard], ids: list[str], path_of: Any, agent: str,
            what: str) -> list[dict[str, Any]]:
    """Every request's row of ``agent`` from the shard that ran it, in the selection's order."""
    rows: dict[str, dict[str, Any]] = {}
    for folder, shard in zip(folders, shards):
        part = shard.select(ids)
        path = path_of(folder, agent)
        found = load_predictions(path) if path.is_file() else {}
        missing = [i for i in part if i not in found]
        if missing:
            raise HuggingGPTError(f"{folder} (shard {shard}) lacks the {what} of {agent} for {len(missing)} of its "
                                  f"{len(part)} requests (first: {missing[0]}): resume it, then merge")
        rows.update({i: found[i] for i in part})
    return [rows[i] for i in ids]
