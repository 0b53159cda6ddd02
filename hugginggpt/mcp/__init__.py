"""`hugginggpt mcp`: every task tool, and the agent as one more tool, over the Model Context Protocol.

A front end like ``server``: the tools and the agent are assembled by ``hugginggpt.build`` from the
same settings as ``run``; this package only speaks MCP (the official ``mcp`` SDK's low-level
``Server``, so each tool's input schema is the one generated from the task table, not one re-derived
from a Python signature).

- ``protocol``: the tools a server lists and how a call of each is answered (``HuggingGPTMCP``), the
  SDK's ``Server`` over them
- ``media``: produced image and audio files as MCP content
- ``progress``: the agent tool's stage events as progress lines
- ``transports``: stdio and streamable HTTP

- A task tool's arguments are validated by the tool itself (an unknown, missing or ill-typed argument
  is a tool error naming it). Input files must lie in a folder the user allowed (``--allow DIR``) or
  in this server's own run folder (so one tool's output can feed the next); anything else is refused.
  Relative paths, in ``--allow`` and in a call, mean what they mean in a shell started in the server's
  working directory (a call's may also be relative to an allowed folder); ``..`` and symlinks are
  followed before the check, so neither leads out of the allowed folders.
- A result comes back as a short text, the result envelope as ``structuredContent``, and each
  produced image or audio file as MCP image/audio content plus a text naming its path.
- Every failure is a tool error (``isError``) with the library's one-line reason.
- The agent tool (``hugginggpt``) loads the controller LLM on its first call, never when tools are
  listed. With no controller configured it answers a tool error that names ``--llm``.

The MCP SDK itself loads only when a server is made or a call answered.
"""

from __future__ import annotations

from hugginggpt.mcp.protocol import AGENT_TOOL, MEDIA_ARG_HINT, HuggingGPTMCP, mcp_input_schema
from hugginggpt.mcp.transports import http_app, local_host, serve_stdio

__all__ = ["AGENT_TOOL", "MEDIA_ARG_HINT", "HuggingGPTMCP", "http_app", "local_host", "mcp_input_schema",
           "serve_stdio"]
