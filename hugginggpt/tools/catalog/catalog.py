"""Which models can run each task: the shipped list, the Hub's live ranking, and models on this disk.

Candidates are ranked by downloads, as the HuggingGPT paper describes (the reference code sorted by
likes, which favours showcase models over dependable ones). Local models, from the Hugging Face
cache or folders the user registers, are marked so the hybrid executor can prefer them.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from hugginggpt.errors import HuggingGPTError, ModelLoadError, UnknownTaskError, error_line
from hugginggpt.paths import expand_home

SHIPPED_CATALOG = "models.json"



class CatalogError(HuggingGPTError):
    """The catalog could not be read, written, or refreshed from the Hub."""


@dataclass
class ModelCard:
    """One model for one task, with what ranking needs and where it lies on disk (if it does)."""

    id: str
    task: str
    downloads: int = 0
    likes: int = 0
    tags: list[str] = field(default_factory=list)
    description: str = ""
    local_path: str | None = None
    #: The one weights file to fetch from the repo (a GGUF repo holds many quantisations), else None.
    file: str | None = None

    @property
    def local(self) -> bool:
        return self.local_path is not None


class ModelCatalog:
    """Models per task. Thread-safe; ``candidates`` returns copies, so callers cannot corrupt it.

    ``shipped``: start from the list shipped with the package; ``scan_hf_cache``: mark models found in
    the Hugging Face cache as local (``hf_cache_dir`` overrides the cache location).
    """

    def __init__(self, cards: Iterable[ModelCard] | None = None, *, shipped: bool = True,
                 scan_hf_cache: bool = True, hf_cache_dir: str | Path | None = None):
        self._lock = threading.RLock()
        self._cards: dict[str, dict[str, ModelCard]] = {}
        self._preferred: dict[str, str] = {}  # task -> the model id the user named for it
        if shipped:
            self._merge(read_cards(resources.files(__package__).joinpath(SHIPPED_CATALOG).read_text("utf-8")))
        self._merge(cards or [])
        if scan_hf_cache:
            self.scan_hf_cache(hf_cache_dir)

    # ------------------------------------------------------------------------------ queries

    def tasks(self) -> list[str]:
        """Tasks that have at least one model."""
        with self._lock:
            return sorted(task for task, cards in self._cards.items() if cards)

    def candidates(self, task: str, k: int = 5) -> list[ModelCard]:
        """The ``k`` most downloaded models of ``task`` (copies; ``card.local`` marks local ones)."""
        self._check_task(task)
        with self._lock:
            cards = sorted(self._cards.get(task, {}).values(), key=lambda c: (-c.downloads, -c.likes, c.id))
            return [replace(card, tags=list(card.tags)) for card in cards[: max(0, k)]]

    def preferred(self, task: str) -> ModelCard | None:
        """The model the user named for ``task`` (``register_local(..., preferred=True)``), if any."""
        with self._lock:
            model_id = self._preferred.get(task)
            card = self._cards.get(task, {}).get(model_id) if model_id else None
            return replace(card, tags=list(card.tags)) if card is not None else None

    def local_path(self, model_id: str) -> Path | None:
        """The folder of a model known to be on disk (any task), else None."""
        with self._lock:
            for cards in self._cards.values():
                card = cards.get(model_id)
                if card is not None and card.local_path:
                    return Path(card.local_path)
        return None

    def __len__(self) -> int:
        with self._lock:
            return sum(len(cards) for cards in self._cards.values())

    # ---------------------------------------------------------------------------- local models

    def register_local(self, path: str | Path, task: str | None = None, model_id: str | None = None, *,
                       preferred: bool = False) -> ModelCard:
        """Add a model folder. Its task comes from the README's ``pipeline_tag`` or config.json when not given.

        ``model_id`` defaults to the Hub id the folder names for itself (see ``named_hub_ids``) when
        the catalog lists that id for the task, so the folder stands for that model (its ranking,
        description, and the selections that name it run on the folder); else to the folder's
        absolute path, which the local executor accepts as a model. ``preferred``: the user named
        this model for the task, so it runs every call of that task (``preferred(task)``).
        """
        folder = _gguf_file(path, task) or expand_home(path).resolve()
        if not folder.is_dir() and not folder.is_file():
            raise ModelLoadError(task, f"model folder not found: {folder}")
        task = task or _folder_task(folder)
        if task is None:
            raise ModelLoadError(None, f"cannot tell the task of the model in {folder}: pass task=...")
        self._check_task(task)
        with self._lock:
            if model_id is None:
                listed = self._cards.get(task, {})
                model_id = next((name for name in named_hub_ids(folder) if name in listed), None)
            card = ModelCard(id=model_id or str(folder), task=task, local_path=str(folder))
            existing = self._cards.setdefault(task, {}).get(card.id)
            if existing is not None:
                card = replace(existing, local_path=str(folder))
            self._cards[task][card.id] = card
            self._mark_local(card.id, str(folder))
            if preferred:
                self._preferred[task] = card.id
        return replace(card)

    def scan_hf_cache(self, cache_dir: str | Path | None = None) -> int:
        """Mark models found in the Hugging Face cache as local; return how many. A missing cache is fine.

        A cached model whose task is known (README tag or config) is added under that task; one with
        no readable task only marks cards the catalog already lists.
        """
        from huggingface_hub import scan_cache_dir

        try:
            info = scan_cache_dir(cache_dir)
        except Exception:  # CacheNotFound, unreadable folders: nothing cached to use
            return 0
        found = 0
        for repo in info.repos:
            if repo.repo_type != "model" or not repo.revisions:
                continue
            snapshot = max(repo.revisions, key=lambda rev: rev.last_modified).snapshot_path
            task = _folder_task(snapshot)
            with self._lock:
                if task is not None and self._known_task(task):
                    existing = self._cards.setdefault(task, {}).get(repo.repo_id)
                    self._cards[task][repo.repo_id] = existing or ModelCard(id=repo.repo_id, task=task)
                if self._mark_local(repo.repo_id, str(snapshot)):
                    found += 1
        return found

    def _mark_local(self, model_id: str, folder: str) -> bool:
        marked = False
        for cards in self._cards.values():
            if model_id in cards:
                cards[model_id].local_path = folder
                marked = True
        return marked

    # ------------------------------------------------------------------------------ the Hub

    def refresh(self, tasks: Iterable[str] | None = None, limit: int = 20, api: Any = None) -> dict[str, int]:
        """Merge the Hub's most downloaded models per task into the catalog; return the count per task.

        ``api`` is a ``huggingface_hub.HfApi`` (default: a new one, honouring ``HF_ENDPOINT``/``HF_TOKEN``).
        Existing cards keep their description and local path; counts and tags are updated.
        """
        from huggingface_hub import HfApi

        api = api or HfApi()
        names = list(tasks) if tasks is not None else [t for t in _table_tasks() or self.tasks() if _is_hub_tag(t)]
        counts: dict[str, int] = {}
        for task in names:
            self._check_task(task)
            if not _is_hub_tag(task):
                raise CatalogError(f"{task} is JARVIS's task name, not a Hub pipeline tag: the Hub cannot list its "
                                   "models; they come from the shipped catalog or register_local()")
            try:
                infos = list(api.list_models(pipeline_tag=task, sort="downloads", limit=limit,
                                             expand=["downloads", "likes", "tags", "pipeline_tag"]))
            except Exception as exc:
                cause = " ".join(str(exc).split())[:300]
                raise CatalogError(f"cannot list {task} models from {api.endpoint}: {cause}") from None
            self._merge(ModelCard(id=i.id, task=task, downloads=int(i.downloads or 0), likes=int(i.likes or 0),
                                  tags=[t for t in (i.tags or []) if ":" not in t][:12]) for i in infos)
            counts[task] = len(infos)
        return counts

    def _merge(self, cards: Iterable[ModelCard]) -> None:
        with self._lock:
            for card in cards:
                old = self._cards.setdefault(card.task, {}).get(card.id)
                if old is not None:
                    card = replace(card, description=card.description or old.description,
                                   local_path=card.local_path or old.local_path, tags=card.tags or old.tags,
                                   file=card.file or old.file)
                self._cards[card.task][card.id] = card

    # ---------------------------------------------------------------------------- persistence

    def save(self, path: str | Path) -> Path:
        """Write the catalog as JSON (the shipped file's format), atomically."""
        from hugginggpt.tools.resources.atomic import atomic_write  # not at import: the resources load PIL

        with self._lock:
            data = {"version": 1, "tasks": {task: [_card_dict(c) for c in self.candidates(task, k=len(cards))]
                                            for task, cards in sorted(self._cards.items()) if cards}}
        text = json.dumps(data, indent=1, ensure_ascii=False)
        return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))

    @classmethod
    def load(cls, path: str | Path, *, scan_hf_cache: bool = False) -> "ModelCatalog":
        """A catalog saved by ``save`` (it already holds the shipped models it was built from)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CatalogError(f"cannot read catalog {path}: {exc.strerror or exc}") from None
        return cls(read_cards(text, source=str(path)), shipped=False, scan_hf_cache=scan_hf_cache)

    # ------------------------------------------------------------------------------ helpers

    def _known_task(self, task: str) -> bool:
        known = _table_tasks()
        return task in known if known else task in self._cards

    def _check_task(self, task: str) -> None:
        if not self._known_task(task):
            raise UnknownTaskError(task, _table_tasks() or self.tasks())


def read_cards(text: str, source: str = SHIPPED_CATALOG) -> list[ModelCard]:
    """Cards from catalog JSON: ``{"tasks": {task: [{"id", "downloads", ...}]}}``."""
    try:
        data = json.loads(text)
        return [ModelCard(task=task, **entry) for task, entries in data["tasks"].items() for entry in entries]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CatalogError(f"{source}: not a model catalog ({error_line(exc)})") from None


_QUOTED_HUB_ID = re.compile(r"""["'`]([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)["'`]""")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def named_hub_ids(folder: str | Path) -> list[str]:
    """The Hub ids a model folder names for itself, most telling first (duplicates dropped).

    In order: its folder name as the Hub cache or a mirror spells it (``models--org--name``, a
    snapshot inside one, ``org--name``); the model card's front matter (``model-index`` names,
    ``model_name``); config.json's ``_name_or_path``; ids quoted in the card's code examples. A
    ``base_model`` is not the model itself (it is what the model was trained from), so it is not
    read. Callers keep only ids they know for the folder's task (``register_local``).
    """
    folder = Path(folder)
    found: list[str] = []
    names = [folder.name]
    if folder.parent.name == "snapshots":
        names.insert(0, folder.parent.parent.name)
    for name in names:
        parts = name.removeprefix("models--").split("--")
        if len(parts) == 2:
            found.append("/".join(parts))
    card = _read_text(folder / "README.md")
    meta = _front_matter(card)
    for entry in meta.get("model-index") or []:
        if isinstance(entry, dict):
            found.append(str(entry.get("name") or ""))
    found.append(str(meta.get("model_name") or ""))
    try:
        found.append(str(json.loads(_read_text(folder / "config.json") or "{}").get("_name_or_path") or ""))
    except (ValueError, AttributeError):
        pass
    found.extend(_QUOTED_HUB_ID.findall(card.split("---", 2)[-1] if meta else card))
    unique: list[str] = []
    for name in found:
        if _HUB_ID.match(name) and name not in unique:
            unique.append(name)
    return unique


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _front_matter(card: str) -> dict[str, Any]:
    """The YAML front matter of a model card ({} when there is none or it is not a mapping)."""
    if not card.startswith("---"):
        return {}
    import yaml

    try:
        data = yaml.safe_load(card.split("---", 2)[1])
    except (yaml.YAMLError, IndexError):
        return {}
    return data if isinstance(data, dict) else {}


def _folder_task(folder: Path) -> str | None:
    """The task of a model folder: ``local_tasks.folder_task``, imported on first use (its package
    holds every local task handler)."""
    from hugginggpt.tools.executors.local_tasks.folder_task import folder_task

    return folder_task(folder)


def _table_tasks() -> list[str]:
    """Task names of the task table (empty when the table cannot be loaded)."""
    try:
        from hugginggpt.tools.table import task_table

        return list(task_table())
    except Exception:  # noqa: BLE001 - the catalog still works on its own data
        return []


def _is_hub_tag(task: str) -> bool:
    """Whether ``task`` is a Hub pipeline tag (the ControlNet tasks of the table are not)."""
    try:
        from hugginggpt.tools.table import task_table

        spec = task_table().get(task)
    except Exception:  # noqa: BLE001 - without the table, every name is taken as a tag
        return True
    return spec is None or spec.hub_tag


def _card_dict(card: ModelCard) -> dict[str, Any]:
    data = asdict(card)
    data.pop("task")
    if data["local_path"] is None:
        data.pop("local_path")
    if data["file"] is None:
        data.pop("file")
    return data


def _gguf_file(path: str | Path, task: str | None) -> Path | None:
    """The GGUF file that ``gguf:PATH`` or ``*.gguf`` names (None for anything else); a clear
    ``ModelLoadError`` when it is missing, not GGUF, or has no task given (a file names none)."""
    from hugginggpt.tools.executors.local_tasks.gguf_text import gguf_path, is_gguf_file

    file = gguf_path(path)
    if file is None:
        return None
    file = file.resolve()
    if not file.is_file():
        raise ModelLoadError(task, f"GGUF file not found: {file}")
    if not is_gguf_file(file):
        raise ModelLoadError(task, f"{file} is not a GGUF file (it does not start with the GGUF magic bytes)")
    if task is None:
        raise ModelLoadError(None, f"a GGUF file names no task: give it as TASK=gguf:{file}")
    return file
