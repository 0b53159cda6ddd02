"""HuggingGPT on LangChain: an LLM plans multi-step AI requests and runs Hugging Face task models."""

__version__ = "0.1.0"
