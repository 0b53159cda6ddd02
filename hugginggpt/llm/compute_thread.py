"""One thread runs every llama.cpp computation of the process.

llama.cpp's CPU backend is built with OpenMP here: each thread that decodes gets its own OpenMP team,
and the teams of other threads stay alive after them. LangChain runs a synchronous model in a pool
of worker threads (``ainvoke``, the server's runs), so decoding would hop between threads and slow
down once several had decoded (docs/PERFORMANCE.md). Loading, decoding and scoring are therefore handed
to one long-lived thread; callers wait for it (``run``) or pull a generator through it (``iterate``).
Calls made on that thread itself run in place, so nested calls cannot deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_EXECUTOR: ThreadPoolExecutor | None = None
_THREAD: threading.Thread | None = None
_STARTING = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR, _THREAD
    with _STARTING:
        if _EXECUTOR is None:
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama.cpp")
            _THREAD = executor.submit(threading.current_thread).result()
            _EXECUTOR = executor
        return _EXECUTOR


def on_compute_thread() -> bool:
    """Whether the caller is the compute thread."""
    return _THREAD is not None and threading.current_thread() is _THREAD


def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the compute thread; its result or its exception, here."""
    if on_compute_thread():
        return fn(*args, **kwargs)
    return _executor().submit(fn, *args, **kwargs).result()


def iterate(items: Iterator[T]) -> Iterator[T]:
    """The items of ``items`` (a generator that decodes), each produced on the compute thread.

    Stopping early closes the generator there too, so its clean-up (llama-cpp-python saves the
    prompt state when a completion ends) runs where the decoding ran.
    """
    sentinel = object()
    try:
        while True:
            item = run(next, items, sentinel)
            if item is sentinel:
                return
            yield item  # type: ignore[misc]
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            run(close)
