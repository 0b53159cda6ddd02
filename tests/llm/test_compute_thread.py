"""Every llama.cpp computation runs on one thread, whichever thread asks (``hugginggpt.llm.compute_thread``)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hugginggpt.llm import compute_thread
from hugginggpt.llm.llamacpp import LlamaCppChatModel
from tests.shared import gguf_or_skip


def _thread() -> threading.Thread:
    return threading.current_thread()


def test_calls_from_many_threads_run_on_one_other_thread():
    with ThreadPoolExecutor(max_workers=4) as pool:
        ran_on = set(pool.map(lambda _: compute_thread.run(_thread), range(16)))
    assert len(ran_on) == 1
    (thread,) = ran_on
    assert thread is not threading.current_thread() and thread.name.startswith("llama.cpp")
    assert compute_thread.run(compute_thread.on_compute_thread) and not compute_thread.on_compute_thread()


def test_exceptions_reach_the_caller_and_the_thread_goes_on():
    def fail():
        raise ValueError("no such model")

    with pytest.raises(ValueError, match="no such model"):
        compute_thread.run(fail)
    assert compute_thread.run(lambda a, b=0: a + b, 2, b=3) == 5


def test_a_call_made_on_the_compute_thread_runs_in_place():
    # Without this, a nested call would wait for the thread that is making it: a deadlock.
    assert compute_thread.run(lambda: compute_thread.run(_thread)) is compute_thread.run(_thread)


def test_iterate_produces_each_item_on_the_compute_thread_and_closes_there():
    seen: list[threading.Thread] = []
    closed_on: list[threading.Thread] = []

    def numbers():
        try:
            for n in range(5):
                seen.append(threading.current_thread())
                yield n
        finally:
            closed_on.append(threading.current_thread())

    assert list(compute_thread.iterate(numbers())) == [0, 1, 2, 3, 4]
    worker = compute_thread.run(_thread)
    assert set(seen) == {worker} and closed_on == [worker]

    seen.clear()
    closed_on.clear()
    for n in compute_thread.iterate(numbers()):
        if n == 1:
            break  # the consumer stops early (a client that went away)
    assert seen == [worker, worker] and closed_on == [worker]


def test_iterate_passes_the_generators_exception_on():
    def broken():
        yield 1
        raise RuntimeError("llama_decode failed")

    items = compute_thread.iterate(broken())
    assert next(items) == 1
    with pytest.raises(RuntimeError, match="llama_decode failed"):
        next(items)


@pytest.mark.slow
def test_the_embedded_model_decodes_on_the_compute_thread_for_every_caller():
    """invoke from two threads, ainvoke (LangChain's worker pool) and astream: all decode on one thread."""
    model = LlamaCppChatModel(model_path=gguf_or_skip("smollm2-135m"), n_ctx=512, max_tokens=6, n_threads=2)
    llama, _ = model._client()
    decoded_on: set[threading.Thread] = set()
    original = llama.eval

    def recorded(tokens):
        decoded_on.add(threading.current_thread())
        return original(tokens)

    llama.eval = recorded
    try:
        callers = [threading.Thread(target=model.invoke, args=("Say hi",)) for _ in range(2)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()

        async def both():
            answer = await model.ainvoke("Name a colour")
            streamed = [chunk async for chunk in model.astream("Name a fruit")]
            return answer, streamed

        answer, streamed = asyncio.run(both())
    finally:
        del llama.eval  # back to the class's method
    assert answer.usage_metadata["output_tokens"] > 0 and streamed
    assert decoded_on == {compute_thread.run(_thread)}
