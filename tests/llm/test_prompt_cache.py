"""The prompt state cache: stage prefixes survive other stages and new processes; bad files are never loaded."""

from __future__ import annotations

import ctypes

import pytest

from hugginggpt.llm.prompt_cache import MIN_TOKENS, PromptState, PromptStateCache, cache_root
from tests.shared import gguf_or_skip

IDENTITY = {"path": "/models/a.gguf", "size": 10, "mtime_ns": 1, "head_sha256": "ab", "n_ctx": 4096, "llama_cpp": "x"}


def _state(tokens, fill: int = 7, size: int = 256) -> PromptState:
    data = (ctypes.c_uint8 * size)(*([fill] * size))
    return PromptState(tuple(tokens), data, size)


def _stored(tmp_path, tokens, identity=IDENTITY) -> PromptStateCache:
    cache = PromptStateCache(identity, tmp_path)
    cache[tokens] = _state(tokens)
    cache.flush()
    return cache


def test_the_longest_common_prefix_is_returned_and_stages_do_not_evict_each_other():
    cache = PromptStateCache(IDENTITY)
    planning = list(range(1000, 1100)) + [1, 2, 3]
    selection = list(range(2000, 2100)) + [4, 5]
    cache[planning] = _state(planning)
    cache[selection] = _state(selection)
    assert cache[list(range(1000, 1100)) + [9, 9]].tokens == tuple(planning)
    assert cache[list(range(2000, 2100)) + [8]].tokens == tuple(selection)
    with pytest.raises(KeyError):
        cache[[5, 6, 7]]


def test_the_next_request_of_a_stage_replaces_the_previous_one():
    cache = PromptStateCache(IDENTITY)
    first = list(range(100)) + [1, 2]
    second = list(range(100)) + [3, 4]
    cache[first] = _state(first)
    cache[second] = _state(second)
    assert len(cache._ram) == 1 and cache[list(range(100))].tokens == tuple(second)


def test_prompts_that_share_only_their_rules_are_kept_side_by_side(tmp_path):
    """The planning prompt has one block of demonstrations per kind of input after the same rules: a
    request of another kind must not evict the block a request of this kind will need next, in RAM or on
    disk, while the next request of the same block replaces its predecessor."""
    rules = list(range(5000, 5600))
    images = rules + list(range(100, 400)) + [1, 2]
    audio = rules + list(range(600, 900)) + [3, 4]
    cache = PromptStateCache(IDENTITY, tmp_path)
    cache[images] = _state(images)
    cache[audio] = _state(audio)
    cache.flush()
    assert cache[rules + list(range(100, 400)) + [7]].tokens == tuple(images)
    assert len(cache._ram) == 2 and len(cache._disk) == 2
    later = rules + list(range(100, 400)) + [5, 6]
    cache[later] = _state(later)
    cache.flush()
    assert sorted(len(t) for t in cache._ram) == [902, 902] and tuple(images) not in cache._ram
    assert {e.tokens for e in cache._disk} == {tuple(audio), tuple(later)}


def test_ram_is_bounded_least_recently_used_first():
    cache = PromptStateCache(IDENTITY, ram_bytes=600)
    for start in (0, 1000, 2000):
        tokens = list(range(start, start + 10))
        cache[tokens] = _state(tokens, size=256)
    assert cache.cache_size <= 600
    with pytest.raises(KeyError):
        cache[list(range(10))]  # the oldest went first
    assert cache[list(range(2000, 2010))].tokens[0] == 2000


def test_a_state_on_disk_is_found_by_a_new_cache(tmp_path):
    tokens = list(range(MIN_TOKENS + 5))
    _stored(tmp_path, tokens)
    again = PromptStateCache(IDENTITY, tmp_path)
    state = again[tokens + [1, 2]]
    assert state.tokens == tuple(tokens) and bytes(state.data) == bytes([7] * 256)
    assert again.disk_loads == 1


def test_short_states_stay_in_ram_only(tmp_path):
    cache = _stored(tmp_path, [1, 2, 3])
    assert not list(cache.directory.glob("*.state"))


def test_a_foreign_models_file_is_ignored_and_removed(tmp_path):
    tokens = list(range(MIN_TOKENS + 5))
    written = _stored(tmp_path, tokens)
    (path,) = written.directory.glob("*.state")
    # The same folder read by a cache of another model (a file copied or a key collision).
    other = PromptStateCache({**IDENTITY, "size": 11}, tmp_path)
    other.directory = written.directory
    other._scan_disk()
    assert other.rejected_files == 1 and not path.exists()
    with pytest.raises(KeyError):
        other[tokens]


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_corrupt_file_is_ignored_removed_and_rebuilt(tmp_path, damage):
    tokens = list(range(MIN_TOKENS + 5))
    written = _stored(tmp_path, tokens)
    (path,) = written.directory.glob("*.state")
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[-1] ^= 0xFF
    elif damage == "truncate":
        raw = raw[:-10]
    else:
        raw = bytearray(b"not a state file at all")
    path.write_bytes(bytes(raw))
    again = PromptStateCache(IDENTITY, tmp_path)
    with pytest.raises(KeyError):
        again[tokens]
    assert again.rejected_files == 1 and not path.exists()
    again[tokens] = _state(tokens)  # rebuilt on the next store
    again.flush()
    assert len(list(again.directory.glob("*.state"))) == 1


def test_the_cache_folder_is_configurable(monkeypatch, tmp_path):
    monkeypatch.setenv("HUGGINGGPT_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("HUGGINGGPT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "hugginggpt"


def _prompt_tokens_evaluated(llama) -> int:
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llama.ctx).n_p_eval)


@pytest.mark.slow
def test_a_real_model_reuses_each_stage_prefix_in_process_and_from_disk(monkeypatch):
    import llama_cpp

    from hugginggpt.llm.llamacpp import LlamaCppChatModel
    from hugginggpt.llm.prompt_cache import model_identity

    path = gguf_or_skip("smollm2-135m")
    model = LlamaCppChatModel(model_path=path, n_ctx=1536, max_tokens=4, temperature=0.0).load()  # its own Llama
    llama, _ = model._client()
    planning = "You plan tasks. " + " ".join(f"Rule {i}: keep step {i} short." for i in range(60))
    selection = "You select models. " + " ".join(f"Hint {i}: prefer model {i}." for i in range(60))

    def prompt_tokens(system: str, user: str) -> int:
        llama_cpp.llama_perf_context_reset(llama.ctx)
        model.invoke([("system", system), ("human", user)])
        return _prompt_tokens_evaluated(llama)

    cold = prompt_tokens(planning, "Describe a cat.")
    prompt_tokens(selection, "Pick one.")
    warm = prompt_tokens(planning, "Describe a dog.")  # selection ran in between
    assert cold > 400 and warm < 60, (cold, warm)

    cache = llama.cache
    cache.flush()
    assert len(list(cache.directory.glob("*.state"))) == 2
    # A new process: nothing in RAM, nothing evaluated, the files on disk.
    fresh = PromptStateCache(model_identity(path, 1536), cache.directory.parent, llama=llama)
    llama.set_cache(fresh)
    llama.reset()
    from_disk = prompt_tokens(selection, "Pick two.")
    assert fresh.disk_loads == 1 and from_disk < 60, from_disk


def test_disk_use_is_bounded_least_recently_used_first(tmp_path):
    cache = PromptStateCache(IDENTITY, tmp_path, disk_files=2)
    for start in (0, 1000, 2000):
        tokens = list(range(start, start + MIN_TOKENS))
        cache[tokens] = _state(tokens)
        cache.flush()
    kept = PromptStateCache(IDENTITY, tmp_path)
    assert sorted(e.tokens[0] for e in kept._disk) == [1000, 2000]
