"""A lock that waiting threads get in arrival order.

``threading.Lock`` wakes an arbitrary waiter, so under a steady stream of requests one caller of a
shared model can wait indefinitely. The embedded llama.cpp model serialises its calls through this
lock instead, so concurrent requests (the server's runs) are served first come, first served.
"""

from __future__ import annotations

import threading
from collections import deque


class FairLock:
    """A non-reentrant FIFO lock with ``threading.Lock``'s interface (``with``, acquire, release, locked)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: deque[threading.Lock] = deque()
        self._locked = False

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        with self._mutex:
            if not self._locked:
                self._locked = True
                return True
            if not blocking:
                return False
            waiter = threading.Lock()
            waiter.acquire()
            self._waiters.append(waiter)
        if waiter.acquire(timeout=timeout if timeout >= 0 else -1):
            return True  # the releasing thread handed the lock over (``_locked`` stayed True)
        with self._mutex:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                return False
        return True  # handed over just as the wait timed out: the lock is ours

    def release(self) -> None:
        with self._mutex:
            if not self._locked:
                raise RuntimeError("release unlocked lock")
            if self._waiters:
                self._waiters.popleft().release()  # straight to the longest waiter
            else:
                self._locked = False

    def locked(self) -> bool:
        return self._locked

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
