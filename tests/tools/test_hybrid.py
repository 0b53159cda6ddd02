"""HybridExecutor routing with a small real local executor and a RemoteExecutor on a local HTTP server."""

from __future__ import annotations

import sys
import threading

import pytest

from hugginggpt.errors import ModelLoadError
from hugginggpt.tools.catalog import ModelCard, ModelCatalog
from hugginggpt.tools.executors import (
    Executor,
    HybridExecutor,
    LocalExecutor,
    RemoteExecutor,
    TaskCall,
    default_executor,
)
from hugginggpt.tools.resources import Workspace
from hugginggpt.tools.results import envelope
from hugginggpt.tools.table import get_task
from tests.inference_server import InferenceServer


class FirstSentenceSummarizer(Executor):
    """A real local executor: summarizes with the first sentence, for the models it 'has on disk'."""

    name = "local"

    def __init__(self, available: set[str]):
        self.available = available
        self.models_run: list[str | None] = []

    def can_run(self, task: str, model: str | None) -> bool:
        return task == "summarization" and model in self.available

    def run(self, call: TaskCall) -> dict:
        self.models_run.append(call.model)
        return envelope(text=call.args["text"].split(". ")[0].upper(), task=call.task.name)


@pytest.fixture
def server():
    with InferenceServer() as srv:
        yield srv


@pytest.fixture
def remote(server):
    return RemoteExecutor(server.url + "/models/{model}", backoff=0.01)


@pytest.fixture
def catalog():
    return ModelCatalog([
        ModelCard("acme/summarizer", "summarization", downloads=5000),
        ModelCard("acme/tiny-local-summarizer", "summarization", downloads=10),
    ], shipped=False, scan_hf_cache=False)


def summarize(ws_root, model=None) -> TaskCall:
    return TaskCall(task=get_task("summarization"), args={"text": "Short one. Then more."},
                    workspace=Workspace(ws_root), model=model)


def test_policy_is_validated(remote):
    with pytest.raises(ValueError, match="unknown execution policy 'cloud'"):
        HybridExecutor(None, remote, policy="cloud")
    with pytest.raises(ValueError, match="needs a local executor"):
        HybridExecutor(None, remote, policy="local")
    with pytest.raises(ValueError, match="needs a remote executor"):
        HybridExecutor(FirstSentenceSummarizer(set()), None, policy="remote")


def test_hybrid_runs_a_local_model_locally(tmp_path, server, remote):
    local = FirstSentenceSummarizer({"acme/summarizer"})
    hybrid = HybridExecutor(local, remote)
    call = summarize(tmp_path, "acme/summarizer")
    assert hybrid.run(call) == {"text": "SHORT ONE"}
    assert call.options == {"backend": "local", "model": "acme/summarizer"}
    assert server.requests == []


def test_hybrid_sends_other_models_to_remote(tmp_path, server, remote):
    hybrid = HybridExecutor(FirstSentenceSummarizer(set()), remote)
    call = summarize(tmp_path, "acme/summarizer")
    assert hybrid.run(call) == {"text": "Short one."}
    assert call.options["backend"] == "remote"
    assert server.requests[-1]["path"] == "/models/acme/summarizer"


def test_without_a_model_hybrid_prefers_a_local_candidate(tmp_path, server, remote, catalog):
    local = FirstSentenceSummarizer({"acme/tiny-local-summarizer"})
    call = summarize(tmp_path)
    HybridExecutor(local, remote, catalog=catalog).run(call)
    assert call.options == {"backend": "local", "model": "acme/tiny-local-summarizer"}
    assert local.models_run == ["acme/tiny-local-summarizer"]


def test_without_a_model_remote_policy_takes_the_most_downloaded(tmp_path, server, remote, catalog):
    local = FirstSentenceSummarizer({"acme/tiny-local-summarizer"})
    call = summarize(tmp_path)
    assert HybridExecutor(local, remote, catalog=catalog, policy="remote").run(call) == {"text": "Short one."}
    assert call.options == {"backend": "remote", "model": "acme/summarizer"}
    assert local.models_run == []


def test_without_any_local_candidate_hybrid_goes_remote(tmp_path, server, remote, catalog):
    call = summarize(tmp_path)
    HybridExecutor(FirstSentenceSummarizer(set()), remote, catalog=catalog).run(call)
    assert call.options["model"] == "acme/summarizer"
    assert server.requests[-1]["path"] == "/models/acme/summarizer"


def test_local_policy_never_calls_remote(tmp_path, server, remote, catalog):
    hybrid = HybridExecutor(FirstSentenceSummarizer(set()), remote, catalog=catalog, policy="local")
    assert not hybrid.can_run("summarization", None)
    with pytest.raises(ModelLoadError, match=r"no model can run it on this machine \(execution policy 'local'\)") as info:
        hybrid.run(summarize(tmp_path))
    assert info.value.task == "summarization"
    assert server.requests == []


def test_remote_policy_ignores_local_models(tmp_path, server, remote):
    local = FirstSentenceSummarizer({"acme/summarizer"})
    call = summarize(tmp_path, "acme/summarizer")
    HybridExecutor(local, remote, policy="remote").run(call)
    assert call.options["backend"] == "remote" and local.models_run == []


def test_can_run_follows_the_route(remote, tmp_path):
    hybrid = HybridExecutor(FirstSentenceSummarizer(set()), remote)
    assert hybrid.can_run("summarization", "acme/anything")  # remote can
    assert not hybrid.can_run("time-series-forecasting", "amazon/chronos-t5-small")  # nobody can
    assert not hybrid.can_run("summarization", str(tmp_path))  # a folder the local side cannot run


def test_the_backend_is_recorded_per_call_across_threads(tmp_path, server, remote):
    hybrid = HybridExecutor(FirstSentenceSummarizer({"acme/local"}), remote)
    seen: dict[str, str | None] = {}

    def work(model: str) -> None:
        call = summarize(tmp_path, model)
        hybrid.run(call)
        seen[model] = call.options["backend"]

    threads = [threading.Thread(target=work, args=(m,)) for m in ("acme/local", "acme/summarizer")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"acme/local": "local", "acme/summarizer": "remote"}


async def test_arun_routes_too(tmp_path, server, remote):
    call = summarize(tmp_path, "acme/summarizer")
    assert await HybridExecutor(None, remote).arun(call) == {"text": "Short one."}
    assert call.options["backend"] == "remote"


# ------------------------------------------------------------------------------ default_executor


def test_default_executor_reads_the_environment(monkeypatch, server, catalog, tmp_path):
    monkeypatch.setenv("HUGGINGGPT_EXECUTION", "remote")
    monkeypatch.setenv("HUGGINGGPT_ENDPOINT", server.url + "/models/{model}")
    executor = default_executor(catalog)
    assert executor.policy == "remote" and executor.local is None
    assert executor.remote.endpoint == server.url + "/models/{model}"
    call = summarize(tmp_path)
    assert executor.run(call) == {"text": "Short one."}
    assert call.options["model"] == "acme/summarizer"


def test_default_executor_uses_providers_without_endpoint(monkeypatch, catalog):
    monkeypatch.delenv("HUGGINGGPT_ENDPOINT", raising=False)
    monkeypatch.delenv("HUGGINGGPT_EXECUTION", raising=False)
    monkeypatch.setenv("HUGGINGGPT_PROVIDER", "hf-inference")
    executor = default_executor(catalog)
    assert executor.policy == "hybrid"
    assert executor.remote.endpoint is None and executor.remote.provider == "hf-inference"
    assert isinstance(executor.local, LocalExecutor) and executor.local.catalog is catalog


def test_default_provider_is_auto(monkeypatch, catalog):
    for name in ("HUGGINGGPT_ENDPOINT", "HUGGINGGPT_PROVIDER", "HUGGINGGPT_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    assert default_executor(catalog, policy="remote").remote.provider == "auto"


def test_default_executor_rejects_an_unknown_policy(monkeypatch, catalog):
    monkeypatch.setenv("HUGGINGGPT_EXECUTION", "gpu")
    with pytest.raises(ValueError, match="HUGGINGGPT_EXECUTION"):
        default_executor(catalog)


def test_without_torch_hybrid_degrades_to_remote_with_a_note(monkeypatch, catalog):
    monkeypatch.setitem(sys.modules, "torch", None)  # what find_spec sees when torch is not installed
    monkeypatch.delenv("HUGGINGGPT_EXECUTION", raising=False)
    executor = default_executor(catalog)
    assert executor.local is None and executor.backends == [executor.remote]
    assert any("torch not installed" in note for note in executor.notes)
    with pytest.raises(ModelLoadError, match="torch not installed"):
        default_executor(catalog, policy="local")


def test_settings_pass_the_endpoint_to_the_executor_without_the_environment(monkeypatch, catalog, tmp_path):
    """hugginggpt.build hands the settings' policy and endpoint to the executor as arguments; the
    process environment is left as it was."""
    import os

    from hugginggpt.build import make_tools
    from hugginggpt.config import load_settings

    monkeypatch.delenv("HUGGINGGPT_ENDPOINT", raising=False)
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "config.toml"))
    settings = load_settings(execution="remote", endpoint="http://127.0.0.1:9/tgi")
    tools = make_tools(settings, catalog)
    executor = tools[0]._runtime.executor
    assert executor.policy == "remote" and executor.remote.endpoint == "http://127.0.0.1:9/tgi"
    assert "HUGGINGGPT_ENDPOINT" not in os.environ


# ------------------------------------------------------------------ why a task cannot run: what to do


def shipped_catalog() -> ModelCatalog:
    return ModelCatalog(shipped=True, scan_hf_cache=False)


def test_without_torch_a_local_only_task_says_which_extra_to_install(monkeypatch, tmp_path):
    """As in an install with only the openai extra: Canny has no Inference API, and no torch here."""
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delenv("HUGGINGGPT_EXECUTION", raising=False)
    monkeypatch.delenv("HUGGINGGPT_ENDPOINT", raising=False)
    executor = default_executor(shipped_catalog())
    with pytest.raises(ModelLoadError) as info:
        executor.route("canny-control", None)
    assert str(info.value) == (
        "canny-control: no model can run it here: locally, torch not installed: pip install 'hugginggpt[local]'; "
        "remotely, the Inference API has no canny-control task (it runs only on this machine)")
    with pytest.raises(ModelLoadError) as info:  # a drawing task on a folder here needs diffusers too
        executor.route("text-to-image", str(tmp_path))
    assert str(info.value) == (
        f"text-to-image: model {str(tmp_path)!r} cannot run here: locally, torch not installed: pip install "
        f"'hugginggpt[local,diffusers]'; remotely, {tmp_path} is a folder on this machine, which a remote server "
        "cannot read")


def test_a_missing_extra_is_named_by_the_local_executor(monkeypatch):
    monkeypatch.setitem(sys.modules, "diffusers", None)
    local = LocalExecutor(shipped_catalog(), device="cpu")
    assert local.why_not("text-to-image", None) == "the 'diffusers' package is not installed (pip install 'hugginggpt[diffusers]')"
    assert local.why_not("tabular-regression", None) == "it has no local implementation"
    hybrid = HybridExecutor(local, RemoteExecutor(), catalog=shipped_catalog())
    with pytest.raises(ModelLoadError) as info:  # and nothing serves it remotely either
        hybrid.route("tabular-regression", None)
    assert str(info.value).startswith("tabular-regression: no model can run it here: locally, it has no local "
                                      "implementation; remotely, no Inference Provider serves tabular-regression")


def test_a_model_not_on_this_machine_says_how_to_give_one(tmp_path):
    local = LocalExecutor(shipped_catalog(), device="cpu")
    hybrid = HybridExecutor(local, RemoteExecutor(), catalog=shipped_catalog(), policy="local")
    with pytest.raises(ModelLoadError) as info:
        hybrid.route("summarization", str(tmp_path / "missing"))
    assert str(info.value) == (
        f"summarization: model {str(tmp_path / 'missing')!r} cannot run on this machine (execution policy 'local'): "
        "it is not on this machine (give a folder with --local-model summarization=DIR, or let --execution local "
        "download it)")


def test_offline_without_an_endpoint_says_what_to_unset_or_give(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    hybrid = HybridExecutor(None, RemoteExecutor(), catalog=shipped_catalog(), policy="remote")
    with pytest.raises(ModelLoadError) as info:
        hybrid.route("image-to-text", "Salesforce/blip-image-captioning-base")
    assert str(info.value) == (
        "image-to-text: model 'Salesforce/blip-image-captioning-base' cannot run on the remote endpoint "
        "(execution policy 'remote'): HF_HUB_OFFLINE=1 turns Hugging Face's hosted inference off (unset it, or "
        "give your own server with --endpoint URL)")
