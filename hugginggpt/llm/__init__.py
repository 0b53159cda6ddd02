"""The controller LLM: ``load_llm("provider:model")`` for any chat model, embedded llama.cpp by default."""

from hugginggpt.llm.specs import LLMSpec, load_llm, parse_spec, resolve_gguf

__all__ = ["LLMSpec", "load_llm", "parse_spec", "resolve_gguf"]
