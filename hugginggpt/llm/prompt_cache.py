"""Prompt state cache of the embedded controller: evaluated prompt prefixes kept in RAM and on disk.

Every stage prompt (planning, selection, response, the GGUF text tasks) starts with a long static
part. llama.cpp reuses the evaluated prefix of the *previous* call only, so stages overwrite each
other and every new process starts cold. Here, after each completion, the model's state (its KV
cache for the prompt and answer tokens) is kept under that token sequence; before the next
completion, llama-cpp-python asks the cache for the state with the longest common token prefix,
loads it, and evaluates only the rest of the prompt (see ``Llama._create_completion``).

- In RAM: least recently used states go first once ``ram_bytes`` is exceeded; a new state replaces
  an older one that it shares at least three quarters of its tokens with (the next request of the same
  prompt: ``supersedes``), so the planning, selection and response states, and the planning prompts
  that share only their rules (one block of demonstrations per kind of input), live side by side
  instead of evicting each other.
- On disk (``directory``): one file per state, written in the background, under a folder keyed by
  the model file's identity (path, size, mtime, a hash of its first MiB), the context size and the
  llama.cpp build. Each file carries that identity, its tokens and a SHA-256 of the state; a file
  that is stale, foreign, truncated or corrupt is ignored and deleted, never loaded. Past
  ``disk_files`` files or ``disk_bytes`` bytes, the least recently used files are removed.

The state is saved without llama-cpp-python's copy of the logits matrix (hundreds of MB for a 150k
vocabulary, and unused unless ``logits_all``): see ``cached_llama_class``.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import logging
import os
import struct
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from hugginggpt import config
from hugginggpt.errors import error_line
from hugginggpt.paths import expand_home

logger = logging.getLogger(__name__)

MAGIC = b"HGPTPSC1"
#: A state shorter than this is not worth a file (a bare chat header).
MIN_TOKENS = 64
DEFAULT_RAM_BYTES = 1 << 30
DEFAULT_DISK_FILES = 24
DEFAULT_DISK_BYTES = 2 << 30


def supersedes(new: Sequence[int], old: Sequence[int]) -> bool:
    """Whether a new state replaces an older one: they share at least three quarters of the older one's
    tokens (the same prompt, a request later). Prompts that share only a part (the rules, but another block
    of demonstrations) are kept side by side."""
    return tuple(new) != tuple(old) and _common_prefix(old, new) * 4 >= 3 * len(old)


def cache_root() -> Path:
    """``$HUGGINGGPT_CACHE``, else ``$XDG_CACHE_HOME/hugginggpt``, else ``~/.cache/hugginggpt``."""
    explicit = config.env("cache")
    if explicit:
        return expand_home(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "hugginggpt"


def prompt_cache_mode() -> str:
    """``HUGGINGGPT_PROMPT_CACHE``: ``disk`` (default: RAM and disk), ``ram`` (RAM only) or ``off`` (``config.choice``:
    another word is a ``ConfigError``)."""
    return config.choice("prompt_cache")


def model_identity(model_path: str | Path, n_ctx: int) -> dict[str, Any]:
    """What a saved state is only valid for: this model file, this context size, this llama.cpp."""
    import llama_cpp

    path = Path(model_path).resolve()
    stat = path.stat()
    with open(path, "rb") as fh:
        head = hashlib.sha256(fh.read(1 << 20)).hexdigest()
    return {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "head_sha256": head,
            "n_ctx": int(n_ctx), "llama_cpp": getattr(llama_cpp, "__version__", "?")}


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class PromptState:
    """A model state after evaluating ``tokens``; ``input_ids`` is what llama-cpp-python compares."""

    tokens: tuple[int, ...]
    data: Any  # a ctypes byte array, as llama_state_get_data filled it
    size: int

    @property
    def input_ids(self):
        import numpy as np

        return np.asarray(self.tokens, dtype=np.intc)


@dataclass
class _DiskEntry:
    path: Path
    tokens: tuple[int, ...]


class PromptStateCache:
    """The cache llama-cpp-python consults (``Llama.set_cache``) for one loaded model.

    ``cache[prompt_tokens]`` returns the stored state with the longest common prefix (loading it
    from disk only when it beats every state in RAM and what the model has evaluated already);
    ``cache[tokens] = state`` stores a state. ``hits``/``disk_loads``/``stores`` count for tests
    and benchmarks.
    """

    def __init__(self, identity: dict[str, Any], directory: str | Path | None = None, *,
                 ram_bytes: int = DEFAULT_RAM_BYTES, disk_files: int = DEFAULT_DISK_FILES,
                 disk_bytes: int = DEFAULT_DISK_BYTES, llama: Any = None):
        self.identity = identity
        self.capacity_bytes = ram_bytes
        self.disk_files = disk_files
        self.disk_bytes = disk_bytes
        self.llama = llama
        self._ram: OrderedDict[tuple[int, ...], PromptState] = OrderedDict()
        self._lock = threading.RLock()
        self.hits = self.disk_loads = self.stores = self.rejected_files = 0
        #: (prompt tokens, completion tokens) of the latest completion, as llama-cpp-python handed them
        #: over (its streamed answers carry no usage): ``cache[prompt]`` before, ``cache[prompt + answer]`` after.
        self.last_lengths: tuple[int, int | None] = (0, None)
        self._disk: list[_DiskEntry] = []
        self.directory: Path | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        if directory is not None:
            key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]
            self.directory = Path(directory) / key
            self._scan_disk()

    # ----------------------------------------------------------------- llama-cpp-python's protocol

    @property
    def cache_size(self) -> int:
        with self._lock:
            return sum(state.size for state in self._ram.values())

    def __contains__(self, key: Sequence[int]) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __getitem__(self, key: Sequence[int]) -> PromptState:
        key = tuple(key)
        self.last_lengths = (len(key), None)
        with self._lock:
            best_key, best_len = None, 0
            for tokens in self._ram:
                n = _common_prefix(tokens, key)
                if n > best_len:
                    best_key, best_len = tokens, n
            evaluated = self._evaluated_prefix(key)
            disk = max(self._disk, key=lambda e: _common_prefix(e.tokens, key), default=None)
            disk_len = _common_prefix(disk.tokens, key) if disk else 0
            if disk is not None and disk_len > max(best_len, evaluated):
                state = self._read_file(disk)
                if state is not None:
                    self.disk_loads += 1
                    self._put(state)
                    best_key, best_len = state.tokens, disk_len
            if best_key is None or best_len <= evaluated:
                raise KeyError("no cached state extends what the model has evaluated")
            self._ram.move_to_end(best_key)
            self.hits += 1
            return self._ram[best_key]

    def __setitem__(self, key: Sequence[int], state: PromptState) -> None:
        prompt = self.last_lengths[0]
        self.last_lengths = (prompt, max(0, len(key) - prompt))
        if not isinstance(state, PromptState):  # a full LlamaState from a plain Llama: not ours to keep
            return
        with self._lock:
            self.stores += 1
            self._put(state)
            if self.directory is not None and len(state.tokens) >= MIN_TOKENS:
                self._write_later(state)

    # ----------------------------------------------------------------- RAM

    def _evaluated_prefix(self, key: tuple[int, ...]) -> int:
        llama = self.llama
        if llama is None:
            return 0
        return _common_prefix(llama.input_ids[: llama.n_tokens].tolist(), key)

    def _put(self, state: PromptState) -> None:
        for tokens in list(self._ram):
            if tokens != state.tokens and supersedes(state.tokens, tokens):
                del self._ram[tokens]  # the same stage's previous request: superseded
        self._ram[state.tokens] = state
        self._ram.move_to_end(state.tokens)
        while len(self._ram) > 1 and self.cache_size > self.capacity_bytes:
            self._ram.popitem(last=False)

    # ----------------------------------------------------------------- disk

    def _scan_disk(self) -> None:
        assert self.directory is not None
        try:
            files = sorted(self.directory.glob("*.state"), key=lambda p: p.stat().st_mtime)
            for leftover in self.directory.glob("*.tmp*"):  # a write cut short (a killed process)
                if time.time() - leftover.stat().st_mtime > 3600:
                    leftover.unlink(missing_ok=True)
        except OSError:
            return
        for path in files:
            tokens = self._read_header(path)
            if tokens is not None:
                self._disk.append(_DiskEntry(path, tokens))

    def _read_header(self, path: Path) -> tuple[int, ...] | None:
        """The tokens of a state file whose header matches this model; None (and the file gone) otherwise."""
        try:
            with open(path, "rb") as fh:
                header = self._header(fh)
                tokens = struct.unpack(f"<{header['n_tokens']}i", fh.read(4 * header["n_tokens"]))
        except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
            self._reject(path, f"unreadable header ({type(exc).__name__})")
            return None
        if header.get("identity") != self.identity:
            self._reject(path, "made by another model file, context size or llama.cpp build")
            return None
        return tuple(tokens)

    @staticmethod
    def _header(fh) -> dict[str, Any]:
        if fh.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a prompt state file")
        (length,) = struct.unpack("<I", fh.read(4))
        if length > 1 << 20:
            raise ValueError("header too long")
        return json.loads(fh.read(length))

    def _read_file(self, entry: _DiskEntry) -> PromptState | None:
        try:
            with open(entry.path, "rb") as fh:
                header = self._header(fh)
                tokens = struct.unpack(f"<{header['n_tokens']}i", fh.read(4 * header["n_tokens"]))
                size = int(header["state_size"])
                data = (ctypes.c_uint8 * size)()
                if fh.readinto(data) != size or fh.read(1):
                    raise ValueError("truncated or overlong state")
        except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
            self._reject(entry.path, f"unreadable ({error_line(exc)})")
            return None
        if (header.get("identity") != self.identity or tuple(tokens) != entry.tokens
                or hashlib.sha256(data).hexdigest() != header.get("state_sha256")):
            self._reject(entry.path, "its identity, tokens or checksum do not match")
            return None
        os.utime(entry.path)  # recently used: removed last
        return PromptState(tuple(tokens), data, size)

    def _reject(self, path: Path, why: str) -> None:
        logger.info("prompt state file %s ignored and removed: %s", path, why)
        self.rejected_files += 1
        self._disk = [e for e in self._disk if e.path != path]
        try:
            path.unlink()
        except OSError:
            pass

    def _write_later(self, state: PromptState) -> None:
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prompt-state-writer")
            _WRITERS.append(self)
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._writer.submit(self._write, state))

    def _write(self, state: PromptState) -> None:
        assert self.directory is not None
        name = hashlib.sha256(struct.pack(f"<{len(state.tokens)}i", *state.tokens)).hexdigest()[:32]
        path = self.directory / f"{name}.state"
        header = json.dumps({"identity": self.identity, "n_tokens": len(state.tokens), "state_size": state.size,
                             "state_sha256": hashlib.sha256(state.data).hexdigest()}).encode()
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(MAGIC + struct.pack("<I", len(header)) + header)
                fh.write(struct.pack(f"<{len(state.tokens)}i", *state.tokens))
                fh.write(memoryview(state.data)[: state.size])
            os.replace(tmp, path)
        except OSError as exc:
            logger.info("cannot write prompt state %s: %s", path, exc)
            tmp.unlink(missing_ok=True)
            return
        with self._lock:
            superseded = [e for e in self._disk
                          if e.path == path or supersedes(state.tokens, e.tokens)]
            for entry in superseded:
                if entry.path != path:
                    entry.path.unlink(missing_ok=True)
            self._disk = [e for e in self._disk if e not in superseded] + [_DiskEntry(path, state.tokens)]
            while len(self._disk) > 1 and (len(self._disk) > self.disk_files
                                           or _total_size(e.path for e in self._disk) > self.disk_bytes):
                self._disk.pop(0).path.unlink(missing_ok=True)

    def flush(self) -> None:
        """Wait until the states handed to the disk are written."""
        for future in list(self._pending):
            future.result()
        self._pending = []


def _total_size(paths) -> int:
    total = 0
    for path in paths:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


_WRITERS: list[PromptStateCache] = []


@atexit.register
def _flush_all() -> None:
    for cache in list(_WRITERS):
        try:
            cache.flush()
        except Exception:  # noqa: BLE001 - a state not written is only a slower next start
            pass


_CLASS: type | None = None


def cached_llama_class() -> type:
    """``llama_cpp.Llama`` whose ``save_state``/``load_state`` keep only the tokens and llama.cpp's state.

    The stock methods also copy the logits matrix (n_batch x n_vocab floats: 300 MB for Qwen's
    vocabulary), which only ``logits_all`` models read; with ``logits_all`` the stock ones are used.
    A state that llama.cpp refuses leaves the model reset: it then evaluates the prompt afresh.
    """
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    import llama_cpp
    from llama_cpp import Llama

    class CachedLlama(Llama):
        def save_state(self):
            if self._logits_all:
                return super().save_state()
            size = llama_cpp.llama_state_get_size(self._ctx.ctx)
            data = (ctypes.c_uint8 * int(size))()
            written = int(llama_cpp.llama_state_get_data(self._ctx.ctx, data, size))
            if written > int(size):
                raise RuntimeError("failed to copy the llama state")
            return PromptState(tuple(self.input_ids[: self.n_tokens].tolist()), data, written)

        def load_state(self, state) -> None:
            if not isinstance(state, PromptState):
                return super().load_state(state)
            if llama_cpp.llama_state_set_data(self._ctx.ctx, state.data, state.size) != state.size:
                logger.info("llama.cpp refused a cached prompt state; evaluating the prompt afresh")
                self.reset()
                self._ctx.kv_cache_clear()
                return
            n = len(state.tokens)
            self.input_ids[:n] = state.tokens
            self.n_tokens = n
            self._requires_eval = True

    _CLASS = CachedLlama
    return CachedLlama
