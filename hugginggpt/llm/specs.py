"""Any chat model as controller, named by a ``provider:model`` spec (LangChain's ``init_chat_model`` form).

    openai:gpt-4o-mini                       OpenAI (OPENAI_API_KEY), or any OpenAI-compatible server
                                             with base_url (vLLM, llama.cpp server, Ollama)
    huggingface:meta-llama/Llama-3.1-8B-Instruct   Hugging Face Inference Providers (HF_TOKEN), or a
                                             TGI/Inference Endpoint with base_url
    gguf:/path/to/model.gguf                 the embedded llama.cpp model, from a local file
    gguf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf   a Hub file, downloaded once
    anthropic:claude-... etc.                any other init_chat_model provider

Every failure is an ``LLMError`` with one line saying what to do; no key or token ever appears in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from hugginggpt import config
from hugginggpt.errors import LLMError, error_line
from hugginggpt.extras import install_hint, require
from hugginggpt.paths import expand_home

OWN_PROVIDERS = ("openai", "huggingface", "gguf")
#: An API key placeholder for OpenAI-compatible local servers, which ignore it.
LOCAL_SERVER_KEY = "not-needed"


@dataclass(frozen=True)
class LLMSpec:
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def _init_chat_model_providers() -> set[str]:
    from langchain.chat_models import base

    return set(getattr(base, "_BUILTIN_PROVIDERS", {}))


def parse_spec(spec: str) -> LLMSpec:
    """Split ``provider:model``; a bare ``*.gguf`` is a GGUF file, a bare name needs a known prefix."""
    spec = spec.strip()
    if not spec:
        raise LLMError("empty LLM spec: use provider:model, e.g. openai:gpt-4o-mini or gguf:/path/model.gguf")
    provider, sep, model = spec.partition(":")
    if sep and provider and model and "/" not in provider:
        provider = provider.lower().replace("-", "_")
        if provider not in OWN_PROVIDERS and provider not in _init_chat_model_providers():
            known = ", ".join(sorted(set(OWN_PROVIDERS) | _init_chat_model_providers()))
            raise LLMError(f"unknown LLM provider {provider!r} in {spec!r}; known providers: {known}")
        return LLMSpec(provider, model)
    if spec.lower().endswith(".gguf"):
        return LLMSpec("gguf", spec)
    from langchain.chat_models.base import _attempt_infer_model_provider

    inferred = _attempt_infer_model_provider(spec)
    if not inferred:
        raise LLMError(f"cannot tell the provider of LLM {spec!r}: write provider:model, e.g. openai:{spec}")
    return LLMSpec(inferred, spec)


def is_hub_file(ref: str) -> bool:
    """Whether a gguf ref that is not an existing file reads as ``OWNER/REPO/FILE.gguf`` on the Hub."""
    path = expand_home(ref)
    looks_local = path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") < 2
    return not path.exists() and not looks_local and ref.lower().endswith(".gguf")


def is_gguf_file(path: str | Path) -> bool:
    """Whether ``path`` is a file that starts with the GGUF magic bytes (``GGUF``)."""
    try:
        with open(expand_home(path), "rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def resolve_gguf(ref: str, *, endpoint: str | None = None, cache_dir: str | Path | None = None) -> Path:
    """A local GGUF path for ``ref``: an existing file, or ``REPO_ID/FILE.gguf`` fetched from the Hub once."""
    path = expand_home(ref)
    if path.is_file():
        if not is_gguf_file(path):
            raise LLMError(f"{ref} is not a GGUF file (it does not start with the GGUF magic bytes)")
        return path.resolve()
    if path.is_dir():
        raise LLMError(f"{ref} is a folder, not a GGUF file")
    if not is_hub_file(ref):
        raise LLMError(
            f"GGUF file not found: {ref}; give an existing .gguf file or a Hub file as gguf:OWNER/REPO/FILE.gguf"
        )
    owner, name, filename = ref.split("/", 2)
    repo_id = f"{owner}/{name}"
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    try:
        return Path(hf_hub_download(repo_id=repo_id, filename=filename, endpoint=endpoint, cache_dir=cache_dir))
    except LocalEntryNotFoundError:
        raise LLMError(
            f"cannot download {filename} from the Hub repo {repo_id}: the Hub is unreachable and the file is not "
            "in the HF cache; connect once, or pass a downloaded file as gguf:/path/to/file.gguf"
        ) from None
    except GatedRepoError:
        raise LLMError(f"the Hub repo {repo_id} is gated: accept its terms on the Hub and set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise LLMError(f"no Hub repo {repo_id} (or it is private: set HF_TOKEN)") from None
    except EntryNotFoundError:
        raise LLMError(f"the Hub repo {repo_id} has no file {filename}") from None
    except HfHubHTTPError as exc:
        raise LLMError(f"download of {filename} from {repo_id} failed: {error_line(exc)}") from None


def _openai(model: str, base_url: str | None, api_key: str | None, kw: dict[str, Any]) -> BaseChatModel:
    ChatOpenAI = require("langchain_openai", f"the controller openai:{model}", LLMError).ChatOpenAI

    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if not base_url:
            raise LLMError(
                f"OPENAI_API_KEY is not set for openai:{model}: export it, or pass --base-url for an "
                "OpenAI-compatible server (vLLM, llama.cpp server, Ollama)"
            )
        key = LOCAL_SERVER_KEY
    return ChatOpenAI(model=model, base_url=base_url, api_key=key, **kw)


def _huggingface(model: str, base_url: str | None, api_key: str | None, kw: dict[str, Any]) -> BaseChatModel:
    from huggingface_hub import get_token

    integration = require("langchain_huggingface", f"the controller huggingface:{model}", LLMError)
    ChatHuggingFace, HuggingFaceEndpoint = integration.ChatHuggingFace, integration.HuggingFaceEndpoint

    token = api_key or get_token()
    if not token and not base_url:
        raise LLMError(f"no Hugging Face token for huggingface:{model}: export HF_TOKEN, or pass --base-url for a TGI server")
    endpoint_args: dict[str, Any] = {"task": "text-generation", "huggingfacehub_api_token": token}
    if base_url:
        endpoint_args["endpoint_url"] = base_url
    else:
        endpoint_args["repo_id"] = model
        endpoint_args["provider"] = config.value("provider")
    for name in ("temperature", "max_new_tokens", "timeout"):
        if name in kw:
            endpoint_args[name] = kw.pop(name)
    endpoint = HuggingFaceEndpoint(**endpoint_args)
    return ChatHuggingFace(llm=endpoint, model_id=model, **kw)


def _gguf(model: str, base_url: str | None, api_key: str | None, kw: dict[str, Any]) -> BaseChatModel:
    from hugginggpt.llm.llamacpp import LlamaCppChatModel, llama_cpp_available

    if base_url:
        raise LLMError("gguf: runs in this process and takes no --base-url; for a llama.cpp server use openai:MODEL")
    # A missing local file is reported first; a Hub file is not downloaded for a model that cannot run.
    path = resolve_gguf(model) if not is_hub_file(model) else None
    if not llama_cpp_available():
        raise LLMError(
            f"llama-cpp-python is not installed: the embedded controller gguf: needs the 'gguf' extra: "
            f"{install_hint('gguf')} (it compiles llama.cpp), or choose a hosted controller with --llm "
            f"openai:MODEL ({install_hint('openai')})"
        )
    path = path or resolve_gguf(model)
    return LlamaCppChatModel(model_path=str(path), **kw).load()


def _other(spec: LLMSpec, base_url: str | None, api_key: str | None, kw: dict[str, Any]) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    if base_url:
        kw["base_url"] = base_url
    if api_key:
        kw["api_key"] = api_key
    try:
        return init_chat_model(spec.model, model_provider=spec.provider, **kw)
    except ImportError as exc:
        raise LLMError(f"the {spec.provider} integration is not installed: {exc}") from None


_BUILDERS = {"openai": _openai, "huggingface": _huggingface, "gguf": _gguf}


def load_llm(
    spec: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float | None = None,
    **kw: Any,
) -> BaseChatModel:
    """The chat model for ``spec``; with no spec the configured one (see ``hugginggpt.config``).

    ``kw`` goes to the model's constructor (e.g. ``max_tokens``, ``n_ctx`` for gguf).
    """
    if spec is None:
        from hugginggpt.config import load_settings

        settings = load_settings()
        spec = settings.llm_spec()
        base_url = base_url or settings.base_url
    parsed = parse_spec(spec)
    if temperature is not None:
        kw["temperature"] = temperature
    try:
        if parsed.provider in _BUILDERS:
            return _BUILDERS[parsed.provider](parsed.model, base_url, api_key, kw)
        return _other(parsed, base_url, api_key, kw)
    except LLMError:
        raise
    except (ValueError, TypeError, ImportError) as exc:
        # Constructors of third-party models: keep the cause, lose any secret and the traceback.
        cause = error_line(exc)
        if api_key:
            cause = cause.replace(api_key, "***")
        raise LLMError(f"cannot create the chat model {parsed}: {cause}") from None
