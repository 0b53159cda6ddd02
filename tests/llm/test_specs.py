"""load_llm: every spec form builds the right LangChain model offline; bad specs give one clear line."""

from __future__ import annotations

import http.server
import threading

import pytest
from langchain_openai import ChatOpenAI

from hugginggpt.config import EMBEDDED_DEFAULT_LLM
from hugginggpt.errors import LLMError
from hugginggpt.llm import LLMSpec, llamacpp, load_llm, parse_spec, resolve_gguf

OPENAI_KEY = "sk-test0123456789abcdefSECRET"
HF_TOKEN = "hf_test0123456789abcdefSECRET"


@pytest.fixture(autouse=True)
def _no_ambient_credentials(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN", "HUGGINGGPT_LLM", "HUGGINGGPT_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token saved by `hf auth login`
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(tmp_path / "absent.toml"))
    (tmp_path / "absent.toml").write_text("")


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("openai:gpt-4o-mini", LLMSpec("openai", "gpt-4o-mini")),
        ("huggingface:Qwen/Qwen2.5-7B-Instruct", LLMSpec("huggingface", "Qwen/Qwen2.5-7B-Instruct")),
        ("gguf:/models/x.gguf", LLMSpec("gguf", "/models/x.gguf")),
        ("gguf:Qwen/R-GGUF/f.gguf", LLMSpec("gguf", "Qwen/R-GGUF/f.gguf")),
        ("Anthropic:claude-3-5-haiku", LLMSpec("anthropic", "claude-3-5-haiku")),
        ("./local/model.gguf", LLMSpec("gguf", "./local/model.gguf")),
        ("gpt-4o", LLMSpec("openai", "gpt-4o")),
        ("openai:ns/model:tag", LLMSpec("openai", "ns/model:tag")),
    ],
)
def test_parse_spec(spec, expected):
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nosuch:model", "unknown LLM provider 'nosuch'"),
        ("", "empty LLM spec"),
        ("mystery-model", "cannot tell the provider"),
    ],
)
def test_bad_specs_are_one_line_llm_errors(spec, message):
    with pytest.raises(LLMError) as info:
        load_llm(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_openai_with_key_and_no_secret_in_repr():
    model = load_llm("openai:gpt-4o-mini", api_key=OPENAI_KEY, temperature=0.0)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini" and model.temperature == 0.0
    assert model.openai_api_key.get_secret_value() == OPENAI_KEY
    assert OPENAI_KEY not in repr(model) and OPENAI_KEY not in str(model)


def test_openai_compatible_server_needs_no_key():
    model = load_llm("openai:Qwen2.5-1.5B-Instruct", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:9/v1"


def test_openai_without_key_says_what_to_do():
    with pytest.raises(LLMError, match="OPENAI_API_KEY is not set.*--base-url"):
        load_llm("openai:gpt-4o-mini")


def test_huggingface_endpoint_with_token_hidden(monkeypatch):
    from langchain_huggingface import ChatHuggingFace

    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    model = load_llm("huggingface:Qwen/Qwen2.5-7B-Instruct", temperature=0.1)
    assert isinstance(model, ChatHuggingFace)
    assert model.llm.repo_id == "Qwen/Qwen2.5-7B-Instruct" and model.llm.temperature == 0.1
    assert HF_TOKEN not in repr(model)


def test_huggingface_tgi_server_by_url():
    model = load_llm("huggingface:tgi", base_url="http://127.0.0.1:9")
    assert model.llm.endpoint_url == "http://127.0.0.1:9"


def test_huggingface_without_token_says_what_to_do():
    with pytest.raises(LLMError, match="export HF_TOKEN"):
        load_llm("huggingface:Qwen/Qwen2.5-7B-Instruct")


def test_other_provider_missing_integration_is_an_llm_error():
    pytest.importorskip("langchain_core")
    try:
        import langchain_anthropic  # noqa: F401
    except ImportError:
        with pytest.raises(LLMError, match="anthropic integration is not installed"):
            load_llm("anthropic:claude-3-5-haiku-latest", api_key="k")
    else:
        pytest.skip("langchain-anthropic is installed here")


def test_secret_never_in_constructor_error():
    # A wrong argument type makes ChatOpenAI raise; the key must not ride along in the message.
    with pytest.raises(LLMError) as info:
        load_llm("openai:gpt-4o-mini", api_key="plainsecretvalue", max_retries="many")
    assert "plainsecretvalue" not in str(info.value)
    assert "openai:gpt-4o-mini" in str(info.value)


def test_missing_local_gguf_file():
    with pytest.raises(LLMError, match="GGUF file not found: /nowhere/model.gguf"):
        load_llm("gguf:/nowhere/model.gguf")


def test_gguf_takes_no_base_url(tmp_path):
    with pytest.raises(LLMError, match="no --base-url"):
        load_llm(f"gguf:{tmp_path}/m.gguf", base_url="http://127.0.0.1:9")


def test_gguf_without_llama_cpp_is_an_llm_error(monkeypatch, tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    monkeypatch.setattr(llamacpp, "llama_cpp_available", lambda: False)
    with pytest.raises(LLMError, match="llama-cpp-python is not installed"):
        load_llm(f"gguf:{path}")


def test_default_spec_order(monkeypatch, tmp_path):
    from hugginggpt.config import load_settings

    assert load_settings().llm_spec() == EMBEDDED_DEFAULT_LLM
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    assert load_settings().llm_spec() == "openai:gpt-4o-mini"
    config = tmp_path / "config.toml"
    config.write_text('llm = "huggingface:org/from-file"\n')
    monkeypatch.setenv("HUGGINGGPT_CONFIG", str(config))
    assert load_settings().llm_spec() == "huggingface:org/from-file"
    monkeypatch.setenv("HUGGINGGPT_LLM", "openai:from-env")
    assert load_settings().llm_spec() == "openai:from-env"
    assert isinstance(load_llm(), ChatOpenAI) and load_llm().model_name == "from-env"


# -- Hub downloads against a local stand-in of the Hub -----------------------------------------

GGUF_BYTES = b"GGUF" + bytes(range(60))
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub(http.server.BaseHTTPRequestHandler):
    """Serves one file the way the Hub's resolve endpoint does (HEAD for metadata, GET for bytes)."""

    def _answer(self, body: bool) -> None:
        if self.path != "/org/repo-GGUF/resolve/main/model.gguf":
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Error-Message", "Entry not found")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(GGUF_BYTES)))
        self.send_header("ETag", '"abc123"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.end_headers()
        if body:
            self.wfile.write(GGUF_BYTES)

    def do_HEAD(self):  # noqa: N802
        self._answer(body=False)

    def do_GET(self):  # noqa: N802
        self._answer(body=True)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_hub():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_hub_gguf_is_downloaded_once_into_the_cache(fake_hub, tmp_path):
    cache = tmp_path / "hub-cache"
    path = resolve_gguf("org/repo-GGUF/model.gguf", endpoint=fake_hub, cache_dir=cache)
    assert path.read_bytes() == GGUF_BYTES
    assert cache in path.parents


def test_hub_file_missing_in_repo(fake_hub, tmp_path):
    with pytest.raises(LLMError, match="has no file other.gguf"):
        resolve_gguf("org/repo-GGUF/other.gguf", endpoint=fake_hub, cache_dir=tmp_path)


def test_hub_download_impossible_offline(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(LLMError, match="Hub is unreachable and the file is not in the HF cache"):
        resolve_gguf("org/repo-GGUF/model.gguf", cache_dir=tmp_path)
