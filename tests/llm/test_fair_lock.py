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


def _marked(arrival: float, work) -> threading.Thread:
    """A thread whose calls carry a request's ``arrival`` (as a server run's do)."""
    from hugginggpt.llm.fair_lock import arrival_order

    def run() -> None:
        arrival_order(arrival)
        work()

    return threading.Thread(target=run)


def test_the_oldest_request_gets_the_lock_first_whenever_its_call_comes():
    """Issue 31: the model answered the runs' calls in the order the calls came, interleaving them, so
    the first of 10 runs finished after nearly all the work. The call of the oldest run goes first."""
    lock, order = FairLock(linger_s=0), []
    lock.acquire()
    young = _marked(2.0, lambda: (lock.acquire(), order.append("young"), lock.release()))
    young.start()
    wait_until(lambda: len(lock._waiters) == 1)
    old = _marked(1.0, lambda: (lock.acquire(), order.append("old"), lock.release()))  # comes later, arrived earlier
    old.start()
    wait_until(lambda: len(lock._waiters) == 2)
    lock.release()
    young.join()
    old.join()
    assert order == ["old", "young"]


def test_a_request_that_releases_the_lock_may_take_it_back_before_a_younger_one():
    """A run's calls follow each other within milliseconds (plan, then selection): the lock waits
    ``linger_s`` for the next one instead of handing the model to a younger run in between."""
    lock, order = FairLock(linger_s=0.5), []

    def older() -> None:
        lock.acquire()
        young = _marked(2.0, lambda: (lock.acquire(), order.append("young"), lock.release()))
        young.start()
        wait_until(lambda: len(lock._waiters) == 1)
        time.sleep(0.4)  # the call's work: the lock may wait a quarter of it for the request's next call
        lock.release()
        time.sleep(0.01)  # the older request's code between two calls
        lock.acquire()
        order.append("old again")
        lock.release()
        young.join()

    older_thread = _marked(1.0, older)
    older_thread.start()
    older_thread.join()
    assert order == ["old again", "young"]


def test_a_lingering_lock_goes_to_the_next_request_when_the_older_one_does_not_come_back():
    lock, got = FairLock(linger_s=0.05), []
    holder = _marked(1.0, lambda: (lock.acquire(), wait_until(lambda: len(lock._waiters) == 1), lock.release()))
    young = _marked(2.0, lambda: (lock.acquire(), got.append(time.monotonic()), lock.release()))
    holder.start()
    wait_until(lock.locked)
    young.start()
    holder.join()
    young.join(timeout=10)
    assert got and not lock.locked() and not lock._waiters


def test_a_finished_request_is_not_waited_for():
    """A run that has ended makes no more calls: the lock goes to the next request at once."""
    from hugginggpt.llm.fair_lock import request_done

    lock, order = FairLock(linger_s=30.0), []

    def older() -> None:
        lock.acquire()
        young = _marked(2.0, lambda: (lock.acquire(), order.append("young"), lock.release()))
        young.start()
        wait_until(lambda: len(lock._waiters) == 1)
        time.sleep(0.2)
        lock.release()  # would be kept for this request up to 50 ms
        request_done(1.0)
        young.join(timeout=0.04)
        order.append("after done")
        young.join()

    thread = _marked(1.0, older)
    thread.start()
    thread.join()
    assert order == ["young", "after done"]
