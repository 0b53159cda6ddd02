"""FairLock: waiters get the lock in arrival order; timeouts and non-blocking tries behave like Lock's."""

from __future__ import annotations

import threading
import time

import pytest

from hugginggpt.llm.fair_lock import FairLock


def wait_until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_waiters_get_the_lock_in_arrival_order():
    lock, order = FairLock(), []
    lock.acquire()
    threads = []
    for i in range(8):
        def work(i=i):
            with lock:
                order.append(i)
                time.sleep(0.002)  # while it holds the lock, later arrivals must keep waiting

        thread = threading.Thread(target=work)
        thread.start()
        threads.append(thread)
        wait_until(lambda n=i + 1: len(lock._waiters) == n)  # queued before the next one arrives
    lock.release()
    for thread in threads:
        thread.join()
    assert order == list(range(8))
    assert not lock.locked()


def test_a_thread_releasing_and_reacquiring_does_not_jump_the_queue():
    lock, order = FairLock(), []
    lock.acquire()
    waiter = threading.Thread(target=lambda: (lock.acquire(), order.append("waiter"), lock.release()))
    waiter.start()
    wait_until(lambda: len(lock._waiters) == 1)
    lock.release()
    lock.acquire()  # the waiter was first: it has had the lock by the time we get it
    order.append("owner")
    lock.release()
    waiter.join()
    assert order == ["waiter", "owner"]


def test_non_blocking_timeout_and_misuse():
    lock = FairLock()
    assert lock.acquire(blocking=False) and lock.locked()
    assert not lock.acquire(blocking=False)
    started = time.monotonic()
    assert not lock.acquire(timeout=0.05) and time.monotonic() - started >= 0.04
    assert len(lock._waiters) == 0  # a timed-out waiter leaves the queue
    lock.release()
    with pytest.raises(RuntimeError):
        lock.release()
