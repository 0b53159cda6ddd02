"""`hugginggpt mcp`: every task tool, and the agent as one more tool, over the Model Context Protocol.

A front end like ``server``: the tools and the agent are assembled by ``hugginggpt.build`` from the
same settings as ``run``; this module only speaks MCP (the official ``mcp`` SDK's low-level
``Server``, so each tool's input schema is the one generated from the task table, not one re-derived
from a Python signature).

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
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import mimetypes
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from hugginggpt import build
from hugginggpt.config import Settings, runs_home, var
from hugginggpt.errors import ConfigError, HuggingGPTError, ResourceError, error_line
from hugginggpt.paths import expand_home

#: How a call reports progress: (step number, one line).
Progress = Callable[[int, str], Awaitable[None]]
#: The agent tool's name (a task is never called that).
AGENT_TOOL = "hugginggpt"
#: Media kinds of a result envelope, in the order they are shown.
MEDIA = ("image", "audio", "video")
#: Files larger than this are named by path only, not sent inline.
MAX_INLINE_BYTES = 8 << 20
#: How audio comes back: MCP audio content (the spec's own), an embedded resource (for clients that
#: cannot read audio content yet, e.g. langchain-mcp-adapters 0.3), or the path alone.
AUDIO_MODES = ("audio", "resource", "path")
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

        content: list[Any] = [types.TextContent(type="text", text=summarize(result))]
        for kind in MEDIA:
            if isinstance(result.get(kind), str):
                content += self.media_content(kind, result[kind])
        return types.CallToolResult(content=content, structuredContent=plain(result), isError=False)

    def media_content(self, kind: str, path: str) -> list[Any]:
        """An image or audio file as MCP content plus a text naming its path (video: the path)."""
        from mcp import types

        file = Path(path)
        mime = mimetypes.guess_type(file.name)[0] or {"image": "image/png", "audio": "audio/wav"}.get(kind, "")
        named = types.TextContent(type="text", text=f"{kind} file: {file}")
        try:
            size = file.stat().st_size
        except OSError:
            return [named]
        mode = self.audio_as if kind == "audio" else ("image" if kind == "image" else "path")
        if mode == "path" or size > MAX_INLINE_BYTES:
            return [named]
        data = base64.b64encode(file.read_bytes()).decode("ascii")
        if mode == "image":
            return [types.ImageContent(type="image", data=data, mimeType=mime), named]
        if mode == "audio":
            return [types.AudioContent(type="audio", data=data, mimeType=mime), named]
        blob = types.BlobResourceContents(uri=file.as_uri(), mimeType=mime, blob=data)
        return [types.EmbeddedResource(type="resource", resource=blob), named]

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
                for kind in MEDIA:
                    if isinstance(result.get(kind), str):
                        content += self.media_content(kind, result[kind])
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


async def run_agent(agent: Any, request: dict[str, Any], progress: Progress | None) -> dict[str, Any]:
    """The agent's output; with ``progress``, through its stage events, each reported as one line."""
    if progress is None:
        return await agent.ainvoke(request)
    from hugginggpt.agent.events import FINAL, RESPONSE_DELTA

    final, step, writing = None, 0, False
    async for event in agent.astream_stage_events(request):
        if event.get("event") == FINAL:
            final = event.get("output")
            continue
        if event.get("event") == RESPONSE_DELTA:  # the answer's pieces: said once, not one notification each
            if writing:
                continue
            writing = True
        step += 1
        await progress(step, stage_line(event))
    if not isinstance(final, dict):
        raise HuggingGPTError("the agent stopped without a final output")
    return final


def stage_line(event: dict[str, Any]) -> str:
    """A stage event as one short line (``task 1 text-to-speech: done``)."""
    from hugginggpt.agent import events

    name = event.get("event")
    task = f"task {event.get('id')} {event.get('task')}"
    if name == events.PLAN:
        return f"plan: {', '.join(str(step.get('task')) for step in event.get('plan') or []) or 'no tasks'}"
    if name == events.SELECTION:
        return f"models chosen for {len(event.get('selections') or {})} task(s)"
    if name == events.TASK_START:
        return f"{task}: started" + (f" on {event['model']}" if event.get("model") else "")
    if name == events.TASK_END:
        return f"{task}: done"
    if name == events.TASK_FAILED:
        return f"{task}: failed: {error_line(str(event.get('error')))}"
    if name == events.TASK_SKIPPED:
        return f"{task}: skipped: {event.get('reason')}"
    if name == events.LLM_STEP:
        return f"controller turn {event.get('step')}"
    if name == events.RESPONSE_DELTA:
        return "writing the answer"
    if name == events.RESPONSE:
        return "answer written"
    return str(name)


def plain(value: Any) -> dict[str, Any]:
    """A JSON object of ``value`` (keys as strings, anything else by its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


# ---------------------------------------------------------------------- transports


async def serve_stdio(app: HuggingGPTMCP) -> None:
    """Serve on stdin/stdout. Everything else written to stdout (a library's print, llama.cpp's C
    output) goes to stderr instead, so the protocol stream stays clean."""
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    stdout = anyio.wrap_file(io.TextIOWrapper(protocol_out, encoding="utf-8", write_through=True))
    server = app.server()
    async with stdio_server(stdout=stdout) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def local_host(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def bind(host: str, port: int) -> Any:
    """A socket bound to ``host``:``port`` before anything loads, so a port in use is one line at once
    (the server package's ``listening_socket`` needs its FastAPI extra)."""
    import socket

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


def http_app(app: HuggingGPTMCP, *, host: str = "127.0.0.1", path: str = "/mcp",
             allowed_hosts: Sequence[str] = ()) -> Any:
    """A Starlette application serving the MCP streamable HTTP transport at ``path``. Requests whose
    Host (or Origin) is not this machine's (or one of ``allowed_hosts``) are refused (DNS rebinding)."""
    import contextlib

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *(f"{h}:*" for h in allowed_hosts)]
    if not local_host(host):
        hosts.append(f"{host}:*")
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts])
    manager = StreamableHTTPSessionManager(app=app.server(), security_settings=security)

    class Endpoint:  # an ASGI app as the route's endpoint (an instance: Starlette passes scope, receive, send)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any):
        async with manager.run():
            yield

    return Starlette(routes=[Route(path, endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])], lifespan=lifespan)
