"""A lock that serves the oldest request first.

The embedded llama.cpp model answers one call at a time, and a request (a server's run) makes
several calls in a row: plan, model selection, answer. ``threading.Lock`` wakes an arbitrary
waiter, and a first-come first-served lock interleaves the runs' calls, so with ten runs at once
every run waits for everyone's plans before its own answer, and the first answer comes after
nearly all the work. Here each call carries its request's arrival (``arrival_order``, a context
variable that follows the request into the threads it starts); the lock goes to the waiting call
of the oldest request, and a request that just released it may take it back within a moment (at
most ``linger_s``, and a quarter of the time its call held the lock) before a younger one gets it:
its next call usually follows within milliseconds. The first request
is then answered after about its own time, with the same throughput. Calls made outside any
request count as arriving when they are made: among themselves, first come first served.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import threading
import time
import weakref

_ARRIVAL: contextvars.ContextVar[float | None] = contextvars.ContextVar("hugginggpt_arrival", default=None)

#: Seconds the lock waits for the next call of the request that released it, before a younger one gets
#: it: at most this, and at most ``LINGER_SHARE`` of the time the call held it (the model time a wait in
#: vain may cost, as a share of the work).
LINGER_S = 0.25
LINGER_SHARE = 0.25


_LOCKS: weakref.WeakSet[FairLock] = weakref.WeakSet()


def arrival_order(arrival: float) -> None:
    """Mark the current context (an asyncio task, a thread) as a request that arrived at ``arrival``
    (``time.time()``): its calls through a ``FairLock`` go before those of requests that arrived later.
    Threads and tasks started from it afterwards inherit the mark (``contextvars``)."""
    _ARRIVAL.set(arrival)


def request_done(arrival: float) -> None:
    """The request that arrived at ``arrival`` makes no more calls: no lock waits for it any longer."""
    for lock in list(_LOCKS):
        lock._forget(arrival)


class FairLock:
    """A non-reentrant lock with ``threading.Lock``'s interface (``with``, acquire, release, locked),
    given to the waiting call of the oldest request (``arrival_order``; else the call's own time)."""

    def __init__(self, linger_s: float = LINGER_S) -> None:
        self.linger_s = linger_s
        self._state = threading.Condition(threading.Lock())
        self._locked = False
        self._waiters: list[tuple[float, int]] = []  # a heap of (arrival, ticket)
        self._tickets = itertools.count()
        self._holder: float | None = None  # the arrival of the holding request (None: no request)
        self._since = 0.0  # time.monotonic() when the holder took the lock
        self._reserved: tuple[float, float] | None = None  # (arrival, until): kept for that request
        _LOCKS.add(self)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        marked = _ARRIVAL.get()
        me = (time.time() if marked is None else marked, next(self._tickets))
        with self._state:
            if self._free_for(me, waiting=False):
                return self._take(me, marked)
            if not blocking:
                return False
            heapq.heappush(self._waiters, me)
            give_up = None if timeout < 0 else time.monotonic() + timeout
            while True:
                if self._free_for(me, waiting=True):
                    self._waiters.remove(me)
                    heapq.heapify(self._waiters)
                    return self._take(me, marked)
                now = time.monotonic()
                wait = None if give_up is None else give_up - now
                if wait is not None and wait <= 0:
                    self._waiters.remove(me)
                    heapq.heapify(self._waiters)
                    self._state.notify_all()
                    return False
                if self._reserved is not None:
                    until = self._reserved[1] - now
                    wait = until if wait is None else min(wait, until)
                self._state.wait(None if wait is None else max(wait, 0.0))

    def _free_for(self, me: tuple[float, int], *, waiting: bool) -> bool:
        """Whether the call ``me`` may take the lock now (the state's lock held)."""
        if self._locked:
            return False
        if self._reserved is not None:
            arrival, until = self._reserved
            if time.monotonic() >= until:
                self._reserved = None
            elif me[0] > arrival:
                return False  # kept a moment for the older request that just released it
        if not self._waiters:
            return True
        first = self._waiters[0]
        return first == me if waiting else me[0] < first[0]

    def _take(self, me: tuple[float, int], marked: float | None) -> bool:
        self._locked, self._holder, self._reserved, self._since = True, marked, None, time.monotonic()
        return True

    def release(self) -> None:
        with self._state:
            if not self._locked:
                raise RuntimeError("release unlocked lock")
            self._locked = False
            now = time.monotonic()
            linger = min(self.linger_s, LINGER_SHARE * (now - self._since))
            if self._holder is not None and self._waiters and self._holder < self._waiters[0][0] and linger > 0:
                self._reserved = (self._holder, now + linger)
            self._holder = None
            self._state.notify_all()

    def _forget(self, arrival: float) -> None:
        with self._state:
            if self._reserved is not None and self._reserved[0] == arrival:
                self._reserved = None
                self._state.notify_all()

    def locked(self) -> bool:
        return self._locked

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
