"""An MCP server over stdio whose one tool writes to stdout from Python and at the file-descriptor level
(as llama.cpp's C code does): run by test_stdout_noise.py, which checks the protocol stream stays clean."""

from __future__ import annotations

import os
import sys

import anyio
from langchain_core.tools import StructuredTool

from hugginggpt.config import Settings
from hugginggpt.mcp import HuggingGPTMCP, serve_stdio


def noisy(text: str) -> dict:
    """Echo a text, chattering on stdout first."""
    print("python print on stdout")
    sys.stdout.flush()
    os.write(1, b"C-level write on fd 1\n")
    return {"text": text}


if __name__ == "__main__":
    tool = StructuredTool.from_function(noisy, name="noisy")
    anyio.run(serve_stdio, HuggingGPTMCP(Settings(), tools=[tool], root=sys.argv[1]))
