"""The ecosystem's agents as peers in ``compare``: same controller LLM, same tools, plans recorded as ours.

Four peers, each run as its package ships it, in planning-only mode (``--mode plan``):

- ``langchain-hugginggpt``: LangChain's HuggingGPT task planner (``langchain_experimental``,
  ``load_chat_planner``); its parsed plan (task, id, dep, args) is the plan. Its ``plan`` is called
  (what its own ``HuggingGPT.run`` calls; its ``aplan`` replaces the tools by strings before parsing
  and cannot return a plan). An answer its parser cannot read is a parse failure.
- ``create-agent``: LangChain's ``langchain.agents.create_agent(llm, tools)``, no system prompt.
- ``smolagents-tools`` / ``smolagents-code``: smolagents' ``ToolCallingAgent`` / ``CodeAgent``, the
  LangChain chat model behind a small smolagents ``Model`` (``LangChainModel``).

Every peer gets the same placeholder tools as our tool-loop agents (``compare.placeholder_tools``),
wrapped so that each call is recorded by ``agent.tool_trace.ToolTrace`` exactly as our agents' calls
are: one node per call, ``<resource>-N`` where an argument carries call N's output. A peer sees a
call's output as the file path the task made, else its text (else compact JSON). An argument that
spells a reference itself (``<resource>-0``) also counts as an edge to that call.

smolagents' LangChain bridge (``Tool.from_langchain``) refuses our tools: their names are task names
(``text-to-image``, not Python identifiers) and optional arguments have no single JSON type. The thin
``smol_tool`` adapter gives smolagents an identifier name, each argument's type and description, and
calls the same LangChain tool.

Packages come from the ``peers`` extra; a missing one is ``PeerMissingError``, one line naming it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from typing import Any, Callable, Sequence, TypeVar

from hugginggpt.errors import HuggingGPTError, error_line

PEER_NAMES = ("langchain-hugginggpt", "create-agent", "smolagents-tools", "smolagents-code")
EXTRA = "pip install 'hugginggpt[peers]'"
#: per peer: (module to import, PyPI package)
_PACKAGES = {
    "langchain-hugginggpt": ("langchain_experimental.autonomous_agents.hugginggpt.task_planner", "langchain-experimental"),
    "create-agent": ("langchain.agents", "langchain"),
    "smolagents-tools": ("smolagents", "smolagents"),
    "smolagents-code": ("smolagents", "smolagents"),
}
#: tool-calling steps a tool-loop peer may take (our agents' RunLimits.max_steps)
MAX_STEPS = 10
#: LLM calls of create_agent (our agents' RunLimits.max_llm_calls): LangGraph's recursion limit 2n (n model steps)
MAX_LLM_CALLS = 12


T = TypeVar("T")


class PeerMissingError(HuggingGPTError):
    """A peer agent's package is not installed."""


class PeerStopped(HuggingGPTError):
    """A peer's run was stopped from outside (its request timed out); raised at its next model call."""


def require(name: str) -> None:
    """Raise ``PeerMissingError`` (one line naming the package and the extra) when ``name``'s package is missing."""
    module, package = _PACKAGES[name]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise PeerMissingError(f"agent {name} needs the package {package} ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else 'not importable'}); "
                               f"install it with: {EXTRA}") from exc


def build_peer(name: str, llm: Any, mode: str, tools: Sequence[Any]) -> Any:
    """The peer agent ``name`` on ``llm`` with ``tools`` (placeholder tools: ``mode`` must be ``plan``)."""
    if name not in PEER_NAMES:
        raise HuggingGPTError(f"unknown peer agent {name!r} (choose from {', '.join(PEER_NAMES)})")
    if mode != "plan":
        raise HuggingGPTError(f"agent {name} is compared in --mode plan only")
    require(name)
    classes = {"langchain-hugginggpt": LangChainHuggingGPTPeer, "create-agent": CreateAgentPeer,
               "smolagents-tools": SmolagentsPeer, "smolagents-code": SmolagentsPeer}
    return classes[name](name, llm, list(tools))


# ----- recording the calls -----

def peer_output(result: Any) -> str:
    """What a peer is shown of a call: the one file the task made, else its text, else compact JSON."""
    from hugginggpt.tools.table import MEDIA_KINDS

    if isinstance(result, dict):
        files = [result[k] for k in MEDIA_KINDS if isinstance(result.get(k), str)]
        if len(files) == 1:
            return files[0]
        if isinstance(result.get("text"), str):
            return result["text"]
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


class CallRecorder:
    """Wraps tools so that every call (arguments rejected or not) becomes a node of a ``ToolTrace``."""

    def __init__(self, tools: Sequence[Any]):
        from hugginggpt.agent.tool_trace import ToolTrace

        self.trace = ToolTrace()
        self.tools = [self._wrap(tool) for tool in tools]

    @property
    def plan(self) -> list[dict[str, Any]]:
        return with_reference_deps(self.trace.plan)

    def _wrap(self, inner: Any) -> Any:
        from langchain_core.tools import StructuredTool, ToolException

        trace = self.trace

        class RecordingTool(StructuredTool):
            def _to_args_and_kwargs(self, tool_input: Any, tool_call_id: str | None) -> Any:
                args = dict(tool_input) if isinstance(tool_input, dict) else {"input": tool_input}
                step = trace.start(self.name, args)  # the arguments as the peer gave them
                try:
                    positional, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
                except Exception as exc:  # rejected arguments: a failed node, as our agents record them
                    trace.fail(step, error_line(exc))
                    raise
                return positional, {**kwargs, "_recorded_step": step}

        def run(_recorded_step: Any, **kwargs: Any) -> str:
            try:
                result = inner.invoke(kwargs)
            except Exception as exc:
                trace.fail(_recorded_step, error_line(exc))
                raise ToolException(error_line(exc)) from exc
            trace.finish(_recorded_step, result)
            return peer_output(result)

        return RecordingTool(name=inner.name, description=inner.description, args_schema=inner.args_schema, func=run,
                             handle_tool_error=True, handle_validation_error=True,
                             metadata={**(inner.metadata or {}), "recorded": True})


def with_reference_deps(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``plan`` with each spelled ``<resource>-N`` of an earlier node added to its ``dep``."""
    from hugginggpt.tools.resources.refs import canonical_refs, ref_ids

    out = []
    for node in plan:
        args = canonical_refs(node.get("args") or {})
        spelled = {n for n in ref_ids(json.dumps(args, ensure_ascii=False)) if n < node["id"]}
        out.append({**node, "args": args, "dep": sorted(set(node.get("dep") or []) | spelled)})
    return out


def _outcome(plan: list[dict[str, Any]], error: str | None = None, parse_errors: int = 0,
             **extra: Any) -> dict[str, Any]:
    return {"plan": plan, "error": error, "parse_errors": parse_errors, **extra}


def _unless_rate_limited(error: Exception) -> None:
    """Raise ``error`` again when it came from an HTTP 429, so the comparison runs the request again after
    the server's wait (``compare.run_request``) instead of recording a peer's failure."""
    from hugginggpt.eval.rate_limit import retry_after

    if retry_after(error) is not None:
        raise error


def _callbacks(config: dict[str, Any] | None) -> list[Any]:
    return list((config or {}).get("callbacks") or [])


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """``work(stop)`` in a worker thread. When the awaiting task is cancelled (``compare``'s timeout),
    ``stop`` is set and the thread is waited for before the cancellation goes on: a thread cannot be
    killed, and one left running would hold the controller model (one call at a time when embedded)
    into the next request, whose calls would then wait and whose clock would run. ``work`` ends at its
    next model call once ``stop`` is set (at most the call in progress finishes)."""
    stop = threading.Event()
    running = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait({running})  # the thread's end; a second cancellation here goes on at once
        raise


# ----- the peers -----

class _Peer:
    def __init__(self, name: str, llm: Any, tools: list[Any]):
        self.name = name
        self.llm = llm
        self.tools = tools


class LangChainHuggingGPTPeer(_Peer):
    """langchain_experimental's HuggingGPT task planner; its parsed plan is the plan."""

    async def aplan(self, request: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        from langchain_core.callbacks import BaseCallbackHandler
        from langchain_experimental.autonomous_agents.hugginggpt.task_planner import load_chat_planner

        raw: list[str] = []

        class Answers(BaseCallbackHandler):
            def on_llm_end(self, response: Any, **kwargs: Any) -> None:
                raw.extend(g.text for gens in response.generations for g in gens)

        planner = load_chat_planner(self.llm)
        planner.llm_chain.verbose = False
        callbacks = [*_callbacks(config), Answers()]
        try:
            # one model call: on a timeout it is finished before the next request starts
            plan = await in_thread(lambda _stop: planner.plan({"input": request, "hf_tools": self.tools},
                                                              callbacks=callbacks))
        except Exception as exc:
            if raw:  # the model answered; its parser could not read the answer
                return _outcome([], f"parse failure: {error_line(exc)}", 1, raw_outputs=raw)
            raise
        from hugginggpt.tools.resources.refs import canonical_refs

        nodes = [{"task": step.task, "id": step.id, "dep": step.dep, "args": canonical_refs(step.args)}
                 for step in plan.steps]
        return _outcome(nodes, raw_outputs=raw)


class CreateAgentPeer(_Peer):
    """``langchain.agents.create_agent(llm, tools)``; its tool calls, in order, are the plan."""

    async def aplan(self, request: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        from langchain.agents import create_agent
        from langchain_core.messages import AIMessage, HumanMessage

        recorder = CallRecorder(self.tools)
        graph = create_agent(self.llm, recorder.tools)
        run_config = {**(config or {}), "recursion_limit": 2 * MAX_LLM_CALLS}
        messages: list[Any] = []
        error = None
        try:
            async for state in graph.astream({"messages": [HumanMessage(request)]}, config=run_config,
                                             stream_mode="values"):
                messages = state.get("messages", messages)
        except Exception as exc:  # a peer that raises or loops: recorded, the comparison goes on
            _unless_rate_limited(exc)
            error = error_line(exc)
        parse_errors = sum(len(m.invalid_tool_calls) for m in messages if isinstance(m, AIMessage))
        return _outcome(recorder.plan, error, parse_errors)


class SmolagentsPeer(_Peer):
    """smolagents' ToolCallingAgent (``smolagents-tools``) or CodeAgent (``smolagents-code``)."""

    async def aplan(self, request: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        return await in_thread(lambda stop: self._run(request, config, stop))

    def _run(self, request: str, config: dict[str, Any] | None, stop: threading.Event | None = None) -> dict[str, Any]:
        from smolagents import CodeAgent, ToolCallingAgent
        from smolagents.monitoring import LogLevel
        from smolagents.utils import AgentParsingError

        recorder = CallRecorder(self.tools)
        tools = [smol_tool(tool) for tool in recorder.tools]
        cls = CodeAgent if self.name == "smolagents-code" else ToolCallingAgent
        agent = cls(tools=tools, model=langchain_model(self.llm, config, stop), max_steps=MAX_STEPS,
                    verbosity_level=LogLevel.OFF)
        error = None
        try:
            agent.run(request)
        except Exception as exc:  # a peer that raises: recorded, the comparison goes on
            _unless_rate_limited(exc)
            error = error_line(exc)
        steps = list(getattr(agent.memory, "steps", []))
        parse_errors = sum(1 for step in steps if isinstance(getattr(step, "error", None), AgentParsingError))
        return _outcome(recorder.plan, error, parse_errors)


# ----- smolagents adapters -----

def _smol_type(schema: dict[str, Any]) -> str | list[str]:
    """A JSON-schema property's type in smolagents' vocabulary (``any`` for what it cannot name)."""
    from smolagents.tools import AUTHORIZED_TYPES

    from hugginggpt.tools.schemas import json_types

    kinds = json_types(schema)
    if not kinds or any(k not in AUTHORIZED_TYPES for k in kinds):
        return "any"
    return kinds[0] if len(kinds) == 1 else kinds


def smol_tool(lc_tool: Any) -> Any:
    """A smolagents ``Tool`` calling the LangChain tool ``lc_tool`` (name made an identifier)."""
    from smolagents import Tool

    schema = lc_tool.tool_call_schema.model_json_schema() if lc_tool.args_schema is not None else {}
    required = set(schema.get("required") or [])
    inputs = {}
    for arg, prop in (schema.get("properties") or {}).items():
        entry: dict[str, Any] = {"type": _smol_type(prop), "description": str(prop.get("description") or arg)}
        if arg not in required:
            entry["nullable"] = True
        inputs[arg] = entry

    class LangChainTool(Tool):
        skip_forward_signature_validation = True

        def __init__(self) -> None:
            self.name = lc_tool.name.replace("-", "_").replace(".", "_")
            self.description = lc_tool.description
            self.inputs = inputs
            self.output_type = "string"
            super().__init__()

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            names = list(self.inputs)
            given = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if v is not None}}
            return lc_tool.run(given)

    return LangChainTool()


def langchain_model(llm: Any, config: dict[str, Any] | None = None, stop: threading.Event | None = None) -> Any:
    """A smolagents ``Model`` answering with the LangChain chat model ``llm`` (``config``: its callbacks).
    Once ``stop`` is set, a call raises ``PeerStopped`` instead of asking the model."""
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
        get_tool_json_schema,
        tool_role_conversions,
    )
    from smolagents.monitoring import TokenUsage

    class LangChainModel(Model):
        def __init__(self) -> None:
            super().__init__(flatten_messages_as_text=True, model_id=getattr(llm, "model_name", None))

        @property
        def supports_stop_parameter(self) -> bool:
            return True

        def generate(self, messages: list[Any], stop_sequences: list[str] | None = None,
                     response_format: dict[str, str] | None = None, tools_to_call_from: list[Any] | None = None,
                     **kwargs: Any) -> Any:
            from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

            if stop is not None and stop.is_set():
                raise PeerStopped("stopped: the request's time is up")
            prepared = self._prepare_completion_kwargs(messages, stop_sequences=stop_sequences,
                                                       custom_role_conversions=tool_role_conversions,
                                                       tools_to_call_from=tools_to_call_from)
            kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
            lc_messages = [kinds.get(str(m["role"]), HumanMessage)(content=_text(m.get("content")))
                           for m in prepared["messages"]]
            model = llm
            if tools_to_call_from:
                schemas = [get_tool_json_schema(tool) for tool in tools_to_call_from]
                try:
                    model = llm.bind_tools(schemas, tool_choice="required")
                except NotImplementedError:
                    model = llm  # no native tool calls: smolagents reads the call from the text
            answer = model.invoke(lc_messages, config={"callbacks": _callbacks(config)}, stop=stop_sequences)
            calls = [ChatMessageToolCall(function=ChatMessageToolCallFunction(name=c["name"], arguments=c["args"]),
                                         id=c.get("id") or f"call_{i}", type="function")
                     for i, c in enumerate(getattr(answer, "tool_calls", None) or [])]
            usage = getattr(answer, "usage_metadata", None) or {}
            from hugginggpt.llm.content import content_text

            return ChatMessage(role=MessageRole.ASSISTANT, content=content_text(answer.content),
                               tool_calls=calls or None, raw=answer,
                               token_usage=TokenUsage(input_tokens=int(usage.get("input_tokens", 0) or 0),
                                                      output_tokens=int(usage.get("output_tokens", 0) or 0)))

    return LangChainModel()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)
