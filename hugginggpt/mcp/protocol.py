"""The tools of one MCP server and how a call of each is answered; the SDK's low-level ``Server``
over them (the transports serve it).

Task tools take their input schema from the task table (media arguments described for MCP callers);
the agent tool (``AGENT_TOOL``) runs the configured agent and loads its controller on first use.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hugginggpt import build
from hugginggpt.config import Settings, runs_home, var
from hugginggpt.errors import ConfigError, HuggingGPTError, ResourceError, error_line
from hugginggpt.mcp.media import AUDIO_MODES, result_media
from hugginggpt.mcp.progress import Progress, run_agent
from hugginggpt.paths import expand_home

#: The agent tool's name (a task is never called that).
AGENT_TOOL = "hugginggpt"
#: What a media argument takes over MCP (the planner's ``<resource>-N`` has no meaning here).
MEDIA_ARG_HINT = ("A path to a local file in a folder the server allows (--allow DIR; a relative path is taken "
                  "from the server's working directory, else from an allowed folder), a path this server "
                  "returned earlier, or an http(s) URL.")

AGENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "request": {"type": "string", "minLength": 1, "description": "What to do, in plain words."},
        "files": {"type": "array", "items": {"type": "string"}, "default": [],
                  "description": "Input files the request is about (in a folder the server allows)."},
    },
    "required": ["request"],
    "additionalProperties": False,
}


def agent_description(agent: str) -> str:
    kinds = {"global": "plans the tasks first, picks a model for each, runs them in order",
             "react": "calls the task tools step by step (ReAct)",
             "tools": "calls the task tools step by step (function calling)"}
    return (f"Solve a request in plain words with HuggingGPT: a controller LLM {kinds.get(agent, 'calls the task tools')} "
            "and answers from the results. Give the input files in `files`. Returns the answer, the files it "
            "produced (image/audio content and their paths) and the plan with each task's result.")


def configured_llm(settings: Settings) -> str | None:
    """The controller the user configured (``--llm``, ``HUGGINGGPT_LLM``, the config file, or
    ``OPENAI_API_KEY``), or None: the MCP server never fetches the embedded default on its own."""
    if settings.llm:
        return settings.llm
    return settings.llm_spec() if os.environ.get("OPENAI_API_KEY") else None


def check_allowed(folders: Sequence[str | os.PathLike], base: Path) -> list[Path]:
    """The ``--allow`` entries as resolved paths (``..`` and symlinks followed), a relative one taken
    from the absolute folder ``base`` as a shell would; a missing one is one ``ConfigError`` line."""
    resolved = []
    for raw in folders:
        path = base / expand_home(raw)  # an absolute entry stays itself
        if not path.exists():
            raise ConfigError(f"--allow {raw}: no such file or folder")
        resolved.append(path.resolve())
    return resolved


def runs_folder(settings: Settings) -> Path:
    """This server's own folder: every call's outputs and the agent's run folders go under it."""
    from hugginggpt.tools.resources import new_run_id

    parent = settings.trace_dir or runs_home()
    return expand_home(parent).resolve() / f"mcp-{new_run_id()}"


def mcp_input_schema(tool: Any) -> dict[str, Any]:
    """The tool's JSON schema (from the task table), media arguments described for MCP callers."""
    from hugginggpt.tools.schemas import MEDIA_HINT

    given = tool.args_schema
    schema = copy.deepcopy(given) if isinstance(given, dict) else given.model_json_schema()
    for prop in schema.get("properties", {}).values():
        if isinstance(prop.get("description"), str) and MEDIA_HINT in prop["description"]:
            prop["description"] = prop["description"].replace(MEDIA_HINT, MEDIA_ARG_HINT)
    return schema


class HuggingGPTMCP:
    """The tools of one MCP server and how a call of each is answered (transport-free).

    ``tools``/``catalog``: made by ``build`` from ``settings`` when not given. ``llm``: a ready
    controller (tests, embedding applications); else ``build.make_llm`` on the agent tool's first call.
    ``base``: the server's working directory, where relative paths start (default: the current one).
    """

    def __init__(self, settings: Settings, *, allow: Sequence[str | os.PathLike] = (), llm: Any = None,
                 tools: list[Any] | None = None, catalog: Any = None, root: str | os.PathLike | None = None,
                 audio_as: str = "audio", base: str | os.PathLike | None = None):
        from hugginggpt.tools.resources import Workspace
        from hugginggpt.tools.resources.workspace import caller_directory

        if audio_as not in AUDIO_MODES:
            raise ConfigError(f"--audio-as must be one of {', '.join(AUDIO_MODES)}, got {audio_as!r}")
        self.settings = settings
        self.audio_as = audio_as
        self.base = caller_directory(base)
        if self.base is None:
            raise ConfigError("the working directory no longer exists: start the server from an existing folder")
        self.allowed = check_allowed(allow, self.base)
        self.root = expand_home(root).resolve() if root is not None else runs_folder(settings)
        if catalog is None and tools is None:
            catalog = build.make_catalog(settings)
        self.catalog = catalog
        self.tools = {tool.name: tool for tool in (tools if tools is not None else build.make_tools(settings, catalog))}
        if AGENT_TOOL in self.tools:
            raise ConfigError(f"a task tool is called {AGENT_TOOL!r}, the agent tool's name")
        # One workspace for every task call: outputs in root/outputs, reads confined to the allowed
        # folders and the root (where earlier outputs and the agent's runs are); a relative path in a
        # call is looked for in the root, the working directory, then each allowed folder.
        self.workspace = Workspace(self.root, inputs=self.allowed, base=self.base)
        self._llm = llm
        self._agent: Any = None
        self._agent_lock = asyncio.Lock()

    # ------------------------------------------------------------------ listing

    def list_tools(self) -> list[Any]:
        from mcp import types

        # Calls write new files (in this server's folder only), change nothing else, and may reach
        # the Hub, a remote endpoint or a URL an argument names.
        hints = types.ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True)
        listed = [types.Tool(name=name, title=name, description=tool.description, inputSchema=mcp_input_schema(tool),
                             annotations=hints)
                  for name, tool in self.tools.items()]
        listed.append(types.Tool(name=AGENT_TOOL, title="HuggingGPT agent", description=agent_description(self.settings.agent),
                                 inputSchema=AGENT_SCHEMA, annotations=hints))
        return listed

    # ------------------------------------------------------------------ calling

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None) -> Any:
        """The ``CallToolResult`` of one call; every failure a tool error with one line. ``progress``
        (the agent tool): called with a line per stage of the run, as MCP progress notifications."""
        from mcp import types

        try:
            if name == AGENT_TOOL:
                return await self._call_agent(arguments or {}, progress)
            tool = self.tools.get(name)
            if tool is None:
                raise HuggingGPTError(f"unknown tool {name!r}: this server offers the task tools and {AGENT_TOOL!r}")
            result = await tool.ainvoke(dict(arguments or {}), config={"configurable": {"workspace": self.workspace}})
            return self._task_result(result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the client gets every failure as a tool error
            return types.CallToolResult(content=[types.TextContent(type="text", text=error_line(exc))], isError=True)

    def _task_result(self, result: dict[str, Any]) -> Any:
        from mcp import types

        from hugginggpt.tools.results import summarize

        content: list[Any] = [types.TextContent(type="text", text=summarize(result)), *result_media(result, self.audio_as)]
        return types.CallToolResult(content=content, structuredContent=plain(result), isError=False)

    # ------------------------------------------------------------------ the agent tool

    async def agent(self) -> Any:
        """The agent, built on first use (the controller loads here, in a worker thread)."""
        async with self._agent_lock:
            if self._agent is None:
                llm = self._llm
                if llm is None:
                    if configured_llm(self.settings) is None:
                        raise ConfigError(f"the {AGENT_TOOL} tool needs a controller LLM: start the server with "
                                          f"--llm SPEC (e.g. openai:gpt-4o-mini or gguf:/path/model.gguf) or set {var('llm')}")
                    llm = await asyncio.to_thread(build.make_llm, self.settings)
                agent = build.make_agent(self.settings, llm, catalog=self.catalog, tools=list(self.tools.values()))
                if hasattr(agent, "workspace_root"):  # its runs under this server's folder: readable by later calls
                    agent.workspace_root = self.root
                self._agent = agent
            return self._agent

    async def _call_agent(self, arguments: dict[str, Any], progress: Progress | None = None) -> Any:
        from mcp import types

        unknown = sorted(set(arguments) - set(AGENT_SCHEMA["properties"]))
        if unknown:
            raise HuggingGPTError(f"{AGENT_TOOL}: {', '.join(unknown)}: unknown argument")
        request, files = arguments.get("request"), arguments.get("files") or []
        if not isinstance(request, str) or not request.strip():
            raise HuggingGPTError(f"{AGENT_TOOL}: request: required argument missing (the request in plain words)")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise HuggingGPTError(f"{AGENT_TOOL}: files: must be a list of file paths")
        inputs = []
        for value in files:  # confined here, before any model loads: the agent allows what it is given
            try:
                inputs.append(str(self.workspace.resolve(value)))
            except ResourceError as exc:
                raise ResourceError(AGENT_TOOL, f"argument 'files': {exc.cause}") from None
        agent = await self.agent()
        output = await run_agent(agent, build.agent_input(request, [], inputs), progress)
        content: list[Any] = [types.TextContent(type="text", text=str(output.get("output", "")))]
        for outcome in (output.get("results") or {}).values():
            result = outcome.get("result") if isinstance(outcome, dict) else None
            if outcome.get("status") == "ok" and isinstance(result, dict):
                content += result_media(result, self.audio_as)
        return types.CallToolResult(content=content, structuredContent=plain(output), isError=False)

    # ------------------------------------------------------------------ the MCP server

    def server(self) -> Any:
        """The SDK's low-level ``Server`` with this object's tools (input checked by the tools themselves)."""
        from mcp.server.lowlevel import Server

        from hugginggpt import __version__

        server: Any = Server("hugginggpt", version=__version__,
                             instructions="HuggingGPT's Hugging Face task tools (one per task) and the "
                                          f"{AGENT_TOOL!r} agent tool that plans and runs multi-step requests.")

        @server.list_tools()
        async def _list() -> list[Any]:
            return self.list_tools()

        @server.call_tool(validate_input=False)  # our own validation: each problem names its argument
        async def _call(name: str, arguments: dict[str, Any]) -> Any:
            context = server.request_context
            token = getattr(context.meta, "progressToken", None) if context.meta else None
            progress = None
            if token is not None:  # the client asked for progress: one notification per stage event
                async def progress(step: int, message: str) -> None:
                    await context.session.send_progress_notification(token, float(step), message=message,
                                                                      related_request_id=context.request_id)
            return await self.call_tool(name, arguments, progress)

        return server


def plain(value: Any) -> dict[str, Any]:
    """A JSON object of ``value`` (keys as strings, anything else by its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
