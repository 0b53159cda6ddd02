"""The embedded controller: a GGUF chat model run in-process by llama.cpp (llama-cpp-python).

Why not langchain-community's ``ChatLlamaCpp``: it loads a fresh copy of the weights per instance,
reports no ``usage_metadata``, and does structured output through tool calling, which small models
get wrong. Here one ``Llama`` is loaded per (file, context size) and shared, calls are serialised by
a lock (a llama.cpp context is not re-entrant) and run on one thread (``compute_thread``), and
``with_structured_output`` uses llama.cpp's JSON-schema grammar, so even a 135M-parameter model can
only emit JSON that matches the schema.
Tools bound with ``auto`` choice are called the way the model was trained to call them: its chat
template (or Qwen's wording in the system prompt) lists them, and ``<tool_call>`` blocks in the
answer are read back as ``AIMessage.tool_calls`` (see ``tool_calls.py``).
Every answer is bounded: by the smaller of the model's ``max_tokens`` and the call's (``token_limits.py``),
and by a stop when it starts repeating itself (``repetition.py``, ``finish_reason="repetition"``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import LangSmithParams
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    MessageLikeRepresentation,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import (
    convert_to_json_schema,
    convert_to_openai_tool,
)
from langchain_core.utils.pydantic import is_basemodel_subclass
from pydantic import BaseModel, Field

from hugginggpt import config
from hugginggpt.errors import LLMError
from hugginggpt.llm import compute_thread
from hugginggpt.llm.content import REPETITION, content_text
from hugginggpt.llm.fair_lock import FairLock
from hugginggpt.llm.json_grammar import needs_own_grammar, schema_llama_grammar
from hugginggpt.llm.repetition import RepetitionStop, stopping_repetition
from hugginggpt.llm.tool_calls import (
    ParsedToolCalls,
    messages_as_text_protocol,
    messages_for_template,
    new_call_id,
    parse_tool_calls,
    settled_content,
    tool_call_chunks,
)

_LOADED: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def llama_cpp_available() -> bool:
    """Whether llama-cpp-python can be imported (it is an optional dependency)."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def cpu_reports_amx() -> bool:
    """Whether the CPU advertises Intel AMX (read from /proc/cpuinfo; False where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return any(line.startswith("flags") and "amx_tile" in line.split() for line in fh)
    except OSError:
        return False


@contextlib.contextmanager
def _extra_buffers(enabled: bool) -> Iterator[None]:
    """Load with llama.cpp's extra weight buffers (AMX, repacking) on or off.

    llama-cpp-python has no argument for ``use_extra_bufts``, so the default model parameters are
    wrapped while one model loads (callers hold ``_LOADING``). Off matters on virtual machines whose
    CPU advertises AMX without the kernel enabling it: there, batched decoding crashes the process.
    """
    if enabled:
        yield
        return
    import llama_cpp.llama as llama_module

    original = llama_module.llama_cpp.llama_model_default_params

    def without_extra_buffers():
        params = original()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        llama_module.llama_cpp.llama_model_default_params = original


def _load_llama(path: str, n_ctx: int, n_threads: int, n_gpu_layers: int, seed: int,
                extra_buffers: bool) -> tuple[Any, threading.Lock]:
    """The shared ``Llama`` for (path, n_ctx) and the lock that serialises its calls."""
    key = (str(Path(path).resolve()), n_ctx)
    with _LOADING:
        if key in _LOADED:
            return _LOADED[key]
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            from hugginggpt.extras import install_hint

            raise LLMError(
                f"llama-cpp-python is not installed: the embedded controller gguf: needs the 'gguf' extra: "
                f"{install_hint('gguf')}, or choose a hosted controller with --llm openai:MODEL"
            ) from None
        if not Path(path).is_file():
            raise LLMError(f"GGUF file not found: {path}")
        from hugginggpt.llm.prompt_cache import cached_llama_class

        try:
            with _extra_buffers(extra_buffers):
                llama = compute_thread.run(
                    cached_llama_class(),
                    model_path=key[0],
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_gpu_layers=n_gpu_layers,
                    seed=seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(f"cannot load GGUF model {path}: {exc}") from None
        _attach_prompt_cache(llama, key[0], n_ctx)
        if config.choice("grammar_sampling") != "full":  # "full": llama-cpp-python's own
            from hugginggpt.llm.grammar_sampling import check_grammar_after_drawing

            check_grammar_after_drawing(llama)
            if config.switch("jump_forward"):
                from hugginggpt.llm.jump_forward import use_forced_text

                use_forced_text(llama)
        if not _LOADED:
            atexit.register(_close_all)
        _LOADED[key] = (llama, FairLock())  # concurrent callers (server runs) are served in arrival order
        return _LOADED[key]


def _attach_prompt_cache(llama: Any, path: str, n_ctx: int) -> None:
    """Keep evaluated prompt prefixes in RAM and on disk (``HUGGINGGPT_PROMPT_CACHE``: disk, ram, off)."""
    from hugginggpt.llm.prompt_cache import PromptStateCache, cache_root, model_identity, prompt_cache_mode

    mode = prompt_cache_mode()
    if mode == "off":
        return
    directory = cache_root() / "prompt-states" if mode == "disk" else None
    llama.set_cache(PromptStateCache(model_identity(path, n_ctx), directory, llama=llama))


def shared_llama(path: str | Path) -> tuple[Any, Any, int] | None:
    """The already loaded ``Llama`` of a GGUF file (the largest context if several), its lock and context size."""
    resolved = str(Path(path).resolve())
    with _LOADING:
        found = [(n_ctx, llama, lock) for (loaded, n_ctx), (llama, lock) in _LOADED.items() if loaded == resolved]
    if not found:
        return None
    n_ctx, llama, lock = max(found, key=lambda item: item[0])
    return llama, lock, n_ctx


def _close_all() -> None:
    """Free the loaded models before the interpreter tears llama.cpp's bindings down (otherwise
    ``Llama.__del__`` runs too late and prints an ignored exception at exit)."""
    with _LOADING:
        for llama, _ in _LOADED.values():
            with contextlib.suppress(Exception):
                llama.close()
        _LOADED.clear()


def _usage(response: dict[str, Any]) -> UsageMetadata:
    usage = response.get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return UsageMetadata(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def _smaller(own: int | None, asked: int | None) -> int | None:
    """The tighter of two answer limits (None: no limit)."""
    limits = [limit for limit in (own, asked) if limit is not None]
    return min(limits) if limits else None


def _json_schema(schema: dict[str, Any] | type) -> dict[str, Any]:
    """A JSON schema for a pydantic class, a TypedDict, an OpenAI tool, or a JSON schema itself."""
    if isinstance(schema, dict) and ("properties" in schema or "type" in schema) and "function" not in schema:
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return convert_to_json_schema(schema)


def _traced_schema(schema: Any, json_schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The schema as LangChain's tracing records it (``convert_to_json_schema``: no property titles)."""
    if schema is None:
        return None
    try:
        return convert_to_json_schema(schema)
    except (ValueError, TypeError):
        return json_schema


def _property_names(schema: Any) -> set[str]:
    """Every property name a JSON schema defines, nested ones included."""
    names: set[str] = set()
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
        for value in schema.values():
            names |= _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            names |= _property_names(value)
    return names


def described_schema(messages: list[dict[str, Any]], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """``messages``, with the JSON schema the answer is held to stated in the system message, unless
    the prompt already names every field (a prompt that spells out its format is left as it is).

    The grammar only stops what the schema forbids: a model that was not told the fields writes its
    whole answer into the first string and often repeats itself there until ``max_tokens``.
    """
    names = _property_names(schema)
    text = "\n".join(content_text(message.get("content")) for message in messages)
    if not names or all(name in text for name in names):
        return messages
    hint = "Answer with one JSON object that follows this JSON schema:\n" + json.dumps(schema, ensure_ascii=False)
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        return [{**messages[0], "content": messages[0]["content"] + "\n\n" + hint}, *messages[1:]]
    return [{"role": "system", "content": hint}, *messages]


_GRAMMAR_MAX_LENGTH = 256
"""Longer ``maxLength`` bounds are left to the tool: llama.cpp's grammar spells a bound out character by
character, so a bound of 200,000 would make a grammar too large to build."""
CLOSE_CALL_GAP = 3.0
"""A grammar-constrained answer's choices made by at most this many logits are listed in its
``response_metadata["close_calls"]`` (the token drawn, the allowed one ranked next): where the model was
unsure, for a caller that checks those choices."""


def grammar_schema(schema: Any) -> Any:
    """``schema`` without the string bounds a grammar cannot spell out (see ``_GRAMMAR_MAX_LENGTH``)."""
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: grammar_schema(value) for key, value in schema.items()
            if not (key == "maxLength" and isinstance(value, int) and value > _GRAMMAR_MAX_LENGTH)}


def call_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON schema of one call of any of ``tools``: what the answer must be when a call is required."""
    variants = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool["function"]["name"]},
                "arguments": grammar_schema(tool["function"].get("parameters") or {"type": "object"}),
            },
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    return variants[0] if len(variants) == 1 else {"oneOf": variants}  # the names tell the calls apart: exactly one matches


def _own_grammar(params: dict[str, Any]) -> None:
    """A response format's schema is decoded under the grammar of ``llm/json_grammar.py``, made once per
    schema (llama-cpp-python would convert it on every call, and misread ``prefixItems`` then ``items``).
    A schema our converter cannot read is left to llama-cpp-python unless it needs our reading of that
    pair: llama-cpp-python then falls back to any JSON object, as it always did."""
    schema = (params.get("response_format") or {}).get("schema")
    if not schema:
        return
    try:
        grammar = schema_llama_grammar(schema)
    except Exception:
        if needs_own_grammar(schema):
            raise
        return
    params.pop("response_format")
    params["grammar"] = grammar


def template_renders_tools(llama: Any) -> bool:
    """Whether the model's own (GGUF-embedded) chat template shows tools and tool calls to it.

    llama-cpp-python hands ``tools`` to a GGUF's Jinja template (Qwen2.5, Hermes, Llama 3.1 use
    them); its built-in formats (chatml, llama-2...) and templates without tools drop them.
    """
    name = getattr(llama, "chat_format", None) or ""
    if getattr(llama, "chat_handler", None) is not None or not name.startswith("chat_template."):
        return False
    key = "tokenizer.chat_template" if name == "chat_template.default" else "tokenizer." + name
    template = (getattr(llama, "metadata", None) or {}).get(key) or ""
    return "tools" in template and "tool_call" in template


def _as_chunk(result: ChatResult, run_manager: CallbackManagerForLLMRun | None) -> ChatGenerationChunk:
    """A whole answer (text and tool calls) as a single stream chunk."""
    ai = result.generations[0].message
    parsed = ParsedToolCalls(content=ai.content, tool_calls=ai.tool_calls, invalid_tool_calls=ai.invalid_tool_calls)
    chunk = ChatGenerationChunk(
        message=AIMessageChunk(
            content=ai.content,
            tool_call_chunks=tool_call_chunks(parsed),
            usage_metadata=ai.usage_metadata,
            response_metadata=ai.response_metadata,
            chunk_position="last",
        ),
        generation_info=result.generations[0].generation_info,
    )
    if run_manager and ai.content:
        run_manager.on_llm_new_token(ai.content, chunk=chunk)
    return chunk


def _text_chunk(text: str, run_manager: CallbackManagerForLLMRun | None) -> ChatGenerationChunk:
    chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
    if run_manager:
        run_manager.on_llm_new_token(text, chunk=chunk)
    return chunk


class LlamaCppChatModel(BaseChatModel):
    """A GGUF chat model run in this process; see the module docstring for why it exists."""

    grammar_schemas: ClassVar[bool] = True
    """Structured output decodes under a grammar of the whole JSON schema (``llm/json_grammar.py``):
    a schema made for one request holds the answer exactly (``structured.exact_schemas``)."""

    model_path: str
    """Path of the .gguf file."""
    n_ctx: int = 8192
    """Context window in tokens (prompt + answer)."""
    n_threads: int = Field(default_factory=lambda: os.cpu_count() or 1)
    n_gpu_layers: int = 0
    temperature: float = 0.2
    top_p: float = 0.95
    max_tokens: int | None = 1024
    """Answer length limit, so a rambling small model cannot run until the context is full. A call may
    ask for less (``max_tokens`` as a call argument or bound): the smaller limit holds."""
    stop_repetition: bool = True
    """Stop an answer whose tail repeats itself verbatim (``llm/repetition.py``): it ends with
    ``finish_reason="repetition"``."""
    seed: int = 0
    """Sampling seed, fixed per call so that the same prompt gives the same answer."""
    stop: list[str] | None = None
    extra_buffers: bool | None = None
    """llama.cpp's extra weight buffers (AMX, repacking); None: on unless the CPU reports AMX, which
    virtual machines often advertise without enabling (batched decoding then crashes)."""

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """What LangSmith records of a call: provider, the GGUF file name, sampling limits."""
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "llamacpp"
        params["ls_model_name"] = kwargs.get("model") or Path(self.model_path).name
        params["ls_temperature"] = kwargs.get("temperature", self.temperature)
        max_tokens = _smaller(self.max_tokens, kwargs.get("max_tokens"))
        if max_tokens is not None:
            params["ls_max_tokens"] = max_tokens
        if stop or self.stop:
            params["ls_stop"] = stop or self.stop
        return params

    def load(self) -> LlamaCppChatModel:
        """Load the weights now (they are shared with every model on the same file and n_ctx)."""
        self._client()
        return self

    def prefill(self, messages: Sequence[MessageLikeRepresentation]) -> int:
        """Read ``messages`` now and keep the model's state in the prompt cache; the prompt's tokens.

        A later call whose prompt starts the same way reads only the rest (from RAM, or from disk in
        another process): a server calls this at start-up with the planning prompt's static part, so
        that its first request does not wait for it. llama.cpp reads a prompt as part of a completion,
        so one answer token is drawn and discarded.
        """
        answer = self._generate(convert_to_messages(messages), max_tokens=1).generations[0].message
        return answer.usage_metadata["input_tokens"] if answer.usage_metadata else 0

    def answer_scores(self, messages: Sequence[MessageLikeRepresentation], answers: Sequence[str]) -> list[float]:
        """The log-probability that the model's whole reply to ``messages`` is each of ``answers``.

        One pass over the prompt, then each answer's tokens are read after it (a few tokens each): the
        exact likelihoods, not a sampled reply. Needs the GGUF's own chat template, which renders the
        prompt up to where the reply starts.
        """
        import numpy as np
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama, lock = self._client()
        template = (llama.metadata or {}).get("tokenizer.chat_template")
        if not template:
            raise LLMError(f"{Path(self.model_path).name} has no chat template to score answers with")

        def text(token: int) -> str:
            return llama._model.token_get_text(token) if token != -1 else ""

        formatter = Jinja2ChatFormatter(template=template, eos_token=text(llama.token_eos()),
                                        bos_token=text(llama.token_bos()))
        prompt = formatter(messages=messages_for_template(convert_to_openai_messages(messages))).prompt
        prompt_tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)  # BOS if the model wants one
        candidates = [llama.tokenize(answer.encode("utf-8"), add_bos=False, special=False) for answer in answers]
        if len(prompt_tokens) + max(map(len, candidates), default=0) >= self.n_ctx:
            raise LLMError(f"the prompt and answers are longer than the context ({self.n_ctx} tokens)")

        def log_probs() -> Any:
            logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).astype(np.float64)
            return logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))

        def score_all() -> list[float]:
            # the start of the prompt the context already holds (the same question, its options in another
            # order) is not read again; at least its last token is: its logits are the answers' first
            held = llama.input_ids[:llama.n_tokens]
            keep = next((i for i, (a, b) in enumerate(zip(held, prompt_tokens)) if a != b), min(len(held), len(prompt_tokens)))
            llama.n_tokens = min(keep, len(prompt_tokens) - 1)  # eval drops the context's cells from here on
            llama.eval(prompt_tokens[llama.n_tokens:])
            first = log_probs()
            scores = []
            for tokens in candidates:
                total = float(first[tokens[0]]) if tokens else float("-inf")
                for previous, token in zip(tokens, tokens[1:]):
                    llama.eval([previous])
                    total += float(log_probs()[token])
                llama.n_tokens = len(prompt_tokens)  # back to the end of the prompt for the next answer
                scores.append(total)
            llama._requires_eval = True  # the logits may be an answer's: a completion reads its prompt's last token again
            return scores

        with lock:
            return compute_thread.run(score_all)

    def _client(self) -> tuple[Any, threading.Lock]:
        extra = self.extra_buffers if self.extra_buffers is not None else not cpu_reports_amx()
        return _load_llama(self.model_path, self.n_ctx, self.n_threads, self.n_gpu_layers, self.seed, extra)

    def _params(self, stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        params = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "stop": stop or self.stop or [],
        }
        params.update(kwargs)
        params["max_tokens"] = _smaller(self.max_tokens, kwargs.get("max_tokens"))
        return params

    def _repetition_stop(self, llama: Any) -> contextlib.AbstractContextManager[RepetitionStop | None]:
        """For one completion: stop it when it repeats itself (``stop_repetition``), else nothing."""
        if not self.stop_repetition:
            return contextlib.nullcontext()
        return stopping_repetition(llama, RepetitionStop())

    def _prompt(self, llama: Any, messages: list[BaseMessage], params: dict[str, Any]) -> tuple[list[dict], set[str] | None]:
        """The messages to send, and the tool names to read calls for (None: the answer is only text).

        A tool named in ``tool_choice`` is left to llama.cpp, which constrains the answer to its
        schema. Otherwise (auto, any, required) the model calls tools in its own trained text form:
        its chat template renders the tools when it can, else they go into the system prompt.
        """
        openai = messages_for_template(convert_to_openai_messages(messages))
        schema = (params.get("response_format") or {}).get("schema")
        if schema:
            openai = described_schema(openai, schema)
        tools = params.pop("tools", None) or []
        choice = params.pop("tool_choice", None)
        renders_tools = template_renders_tools(llama)
        if isinstance(choice, dict) and tools:
            params.update(tools=grammar_schema(tools), tool_choice=choice)
            return (openai if renders_tools else messages_as_text_protocol(openai, [])), None
        if choice == "none":
            tools = []
        names = {tool["function"]["name"] for tool in tools} or None
        if choice in ("any", "required") and tools:
            params["response_format"] = {"type": "json_object", "schema": call_schema(tools)}
        if not renders_tools:
            return messages_as_text_protocol(openai, tools), names
        if tools:
            params["tools"] = tools
        return openai, names

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        from hugginggpt.llm.grammar_sampling import close_calls, forget_draws

        llama, lock = self._client()
        params = self._params(stop, kwargs)
        prompt, tool_names = self._prompt(llama, messages, params)
        _own_grammar(params)
        with lock, self._repetition_stop(llama) as repeating:
            forget_draws(llama)
            response = compute_thread.run(llama.create_chat_completion, messages=prompt, **params)
            near = close_calls(llama, CLOSE_CALL_GAP)
        choice = response["choices"][0]
        message = choice["message"]
        content = message.get("content") or ""
        tool_calls = [
            tool_call(
                name=call["function"]["name"],
                args=json.loads(call["function"]["arguments"] or "{}"),
                id=call.get("id") or new_call_id(),
            )
            for call in message.get("tool_calls") or []
        ]
        invalid_tool_calls = []
        if tool_names is not None and not tool_calls:
            parsed = parse_tool_calls(content, tool_names)
            content, tool_calls, invalid_tool_calls = parsed.content, parsed.tool_calls, parsed.invalid_tool_calls
        finish_reason = "tool_calls" if tool_calls else choice.get("finish_reason")
        if repeating is not None and repeating.triggered:
            finish_reason = REPETITION
        ai = AIMessage(
            content=content,
            tool_calls=tool_calls,
            invalid_tool_calls=invalid_tool_calls,
            usage_metadata=_usage(response),
            response_metadata={"finish_reason": finish_reason, "model_name": Path(self.model_path).name,
                               **({"close_calls": near} if near else {})},
        )
        return ChatResult(
            generations=[ChatGeneration(message=ai, generation_info={"finish_reason": finish_reason})],
            llm_output={"token_usage": response.get("usage") or {}},
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The answer as it is written; the chunks add up to what ``invoke`` returns.

        With tools offered, text shows as soon as it surely is not a call (``settled_content``), and
        the last chunk carries the rest of the content and the calls read out of the whole answer
        (``tool_call_chunks``). A call llama.cpp writes under a named tool's schema comes whole.
        """
        if kwargs.get("tools") and isinstance(kwargs.get("tool_choice"), dict):
            yield _as_chunk(self._generate(messages, stop, run_manager, **kwargs), run_manager)
            return
        llama, lock = self._client()
        params = self._params(stop, kwargs)
        prompt, tool_names = self._prompt(llama, messages, params)
        _own_grammar(params)
        text, shown, finish_reason = "", "", None
        with lock:  # held until the stream ends: the context is busy until then
            with self._repetition_stop(llama) as repeating:  # the stream keeps the stop it started with
                parts = compute_thread.run(llama.create_chat_completion, messages=prompt, stream=True, **params)
            for part in compute_thread.iterate(parts):
                choice = (part.get("choices") or [{}])[0]
                delta = (choice.get("delta") or {}).get("content") or ""
                finish_reason = choice.get("finish_reason") or finish_reason
                text += delta
                piece = delta if tool_names is None else settled_content(text, tool_names)[len(shown):]
                if piece:
                    shown += piece
                    yield _text_chunk(piece, run_manager)
            # llama-cpp-python streams no usage; the prompt cache saw both token counts go by.
            prompt_tokens, completion_tokens = getattr(llama.cache, "last_lengths", (0, None))
        usage = None
        if completion_tokens is not None:
            usage = UsageMetadata(input_tokens=prompt_tokens, output_tokens=completion_tokens,
                                  total_tokens=prompt_tokens + completion_tokens)
        parsed = ParsedToolCalls(content=text) if tool_names is None else parse_tool_calls(text, tool_names)
        rest = parsed.content[len(shown):]  # the settled content is always the start of the final one
        if parsed.tool_calls:
            finish_reason = "tool_calls"
        elif repeating is not None and repeating.triggered:
            finish_reason = REPETITION
        chunk = ChatGenerationChunk(
            message=AIMessageChunk(content=rest, tool_call_chunks=tool_call_chunks(parsed), usage_metadata=usage,
                                   chunk_position="last",
                                   response_metadata={"finish_reason": finish_reason,
                                                      "model_name": Path(self.model_path).name}),
            generation_info={"finish_reason": finish_reason},
        )
        if run_manager and rest:
            run_manager.on_llm_new_token(rest, chunk=chunk)
        yield chunk

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Any],
        *,
        tool_choice: str | dict | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Offer tools.

        Naming one in ``tool_choice`` (or ``any``/``required`` with a single tool) makes llama.cpp
        constrain the call to its schema; otherwise (``auto``) the model decides, and its
        ``<tool_call>`` blocks become ``AIMessage.tool_calls``.
        """
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "any", "required"):
            tool_choice = {"type": "function", "function": {"name": tool_choice}}
        elif tool_choice in ("any", "required") and len(formatted) == 1:
            tool_choice = {"type": "function", "function": {"name": formatted[0]["function"]["name"]}}
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type | None = None,
        *,
        method: str = "json_schema",
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict | BaseModel]:
        """Grammar-constrained JSON for ``schema``, which the model is told unless the prompt names its fields.

        Every method (``json_schema``, ``function_calling``, ``json_mode``) decodes under a grammar:
        with a schema it is the schema's grammar, for ``json_mode`` without one any JSON object.
        """
        if method not in ("json_schema", "function_calling", "json_mode"):
            raise ValueError(f"unknown structured output method {method!r}")
        if schema is None and method != "json_mode":
            raise ValueError("a schema is required unless method='json_mode'")
        json_schema = _json_schema(schema) if schema is not None else None
        response_format: dict[str, Any] = {"type": "json_object"}
        if json_schema is not None:
            response_format["schema"] = json_schema
        llm = self.bind(
            response_format=response_format,
            ls_structured_output_format={"kwargs": {"method": method}, "schema": _traced_schema(schema, json_schema)},
            **kwargs,
        )
        if isinstance(schema, type) and is_basemodel_subclass(schema):  # pydantic 2, or 1 (pydantic.v1)
            parser: Runnable = PydanticOutputParser(pydantic_object=schema)
        else:
            parser = JsonOutputParser()
        if not include_raw:
            return llm | parser
        parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser, parsing_error=lambda _: None)
        unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=llm) | parsed.with_fallbacks([unparsed], exception_key="parsing_error")
