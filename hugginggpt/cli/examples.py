"""The examples at the end of each command's ``--help`` page (``hugginggpt run --help``...)."""

from __future__ import annotations

import argparse
from typing import Any

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "hugginggpt": [
        ('hugginggpt run "Describe example.jpg, then read the description aloud" --file examples/example.jpg',
         "one request, with the embedded controller (extra 'gguf')"),
        ('hugginggpt run "Translate \'good morning\' into French" --llm openai:gpt-4o-mini',
         "a hosted controller (extra 'openai', OPENAI_API_KEY)"),
        ("hugginggpt tools", "the tasks the planner may use"),
        ("hugginggpt serve", "the chat page and HTTP APIs on http://127.0.0.1:8000/"),
        ("hugginggpt COMMAND --help", "each command's options and examples"),
    ],
    "run": [
        ('hugginggpt run "Describe example.jpg, then read the description aloud" --file examples/example.jpg', ""),
        ('hugginggpt run "Translate \'good morning\' into French" --llm openai:gpt-4o-mini', "OPENAI_API_KEY set"),
        ('hugginggpt run "What is in photo.jpg?" --file photo.jpg --llm openai:qwen2.5 '
         "--base-url http://127.0.0.1:8080/v1", "an OpenAI-compatible server (vLLM, llama.cpp server, Ollama)"),
        ('hugginggpt run "Caption photo.jpg" --file photo.jpg --execution local --json',
         "task models on this machine; the whole output as JSON"),
    ],
    "chat": [
        ("hugginggpt chat --llm openai:gpt-4o-mini", "type requests, one a line; `exit` or Ctrl-D ends"),
        ('echo "Caption photo.jpg" | hugginggpt chat --file photo.jpg -q', "requests from a pipe"),
    ],
    "tools": [
        ("hugginggpt tools", "every task and its arguments"),
        ("hugginggpt tools image-to-text", "one task in detail"),
        ("hugginggpt tools --json", "the task specs as JSON"),
    ],
    "models": [
        ("hugginggpt models image-to-text", "the catalog's candidates, local ones marked"),
        ("hugginggpt models summarization -k 10 --refresh", "the Hub's current top ten"),
        ("hugginggpt models pull summarization", "download the task's top model ahead of a run"),
        ("hugginggpt models pull gguf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
         "download the default controller GGUF"),
    ],
    "score": [
        ("hugginggpt score --data taskbench/multimedia --predictions predictions.jsonl", ""),
        ("hugginggpt score --data taskbench/multimedia --predictions predictions.jsonl --json",
         "every group's metrics as JSON"),
    ],
    "compare": [
        ("hugginggpt compare --data taskbench/multimedia --llm openai:gpt-4o-mini --limit 30",
         "plans of the three agents, scored"),
        ("hugginggpt compare --data taskbench/multimedia --agents global --llm gguf:model.gguf "
         "--split test --critic gguf:model.gguf", "with the critic's pass rate"),
        ("hugginggpt compare --data taskbench/multimedia --llm openai:Qwen/Qwen2.5-7B-Instruct "
         "--base-url http://127.0.0.1:8000/v1 --concurrency 32", "a vLLM server, 32 requests at once per agent"),
        ("hugginggpt compare --data taskbench/multimedia --llm openai:MODEL --base-url URL --shard 2/4 --out part2",
         "the second of four parts; `hugginggpt merge` joins the parts"),
    ],
    "merge": [
        ("hugginggpt merge part1 part2 part3 part4 --out merged", "the report of the four shards together"),
    ],
    "mcp": [
        ("hugginggpt mcp --allow ~/Pictures", "stdio, for Claude Desktop and other MCP clients"),
        ("hugginggpt mcp --allow ./data --llm openai:gpt-4o-mini --execution remote", ""),
        ("hugginggpt mcp --http --port 8765 --allow ./data", "streamable HTTP at http://127.0.0.1:8765/mcp"),
    ],
    "serve": [
        ("hugginggpt serve", "http://127.0.0.1:8000/ : the chat page; API docs at /docs"),
        ("hugginggpt serve --llm openai:gpt-4o-mini --port 8080", "a hosted controller"),
        ('hugginggpt serve --host 0.0.0.0 --api-key "$(openssl rand -hex 16)"',
         "reachable from other machines, behind a key"),
    ],
}


def epilog(command: str) -> str:
    """The "examples:" block of ``command``'s help page."""
    lines = ["examples:"]
    for example, note in EXAMPLES[command]:
        lines.append(f"  {example}")
        if note:
            lines.append(f"      {note}")
    return "\n".join(lines)


def help_options(command: str) -> dict[str, Any]:
    """Keyword arguments of ``add_parser``/``ArgumentParser``: the examples as the help page's epilog,
    printed as written (argument help is still wrapped to the terminal)."""
    return {"epilog": epilog(command), "formatter_class": argparse.RawDescriptionHelpFormatter}
