"""Build one LangChain tool (``TaskTool``, a thin ``BaseTool``) per task of the table.

A tool call validates its arguments, turns media arguments into checked local files, and hands a
``TaskCall`` to the executor. The model and the workspace of a call come through the LangChain
config (``configurable.hf_model`` / ``configurable.workspace``), so one set of tools serves many
runs and every call passes through callbacks.

Called the way a model calls tools (a ``ToolCall``, as ``create_agent``/LangGraph's ``ToolNode``
do), a tool answers with a ``ToolMessage``: a short text for the model as content, the whole result
envelope as the artifact (``response_format="content_and_artifact"``), and any failure as an error
message (``status="error"``) so the model can correct itself (``handle_tool_error`` /
``handle_validation_error``). Called with plain arguments (Python code, the global-plan scheduler),
it returns the envelope itself and raises typed errors (``TaskError`` subclasses).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import PrivateAttr, ValidationError

from hugginggpt.errors import InvalidArgumentsError, ResourceError, TaskError, error_line
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.results import check_envelope, summarize
from hugginggpt.tools.schemas import args_model, is_integer
from hugginggpt.tools.table import ArgSpec, TaskSpec, get_task, task_table

if TYPE_CHECKING:
    from hugginggpt.tools.catalog import ModelCatalog
    from hugginggpt.tools.resources import Workspace


class TaskTool(BaseTool):
    """The tool of one task. Its error policy (errors back to the model as error ``ToolMessage``s)
    and output format (short text + envelope artifact) apply to model tool calls; a plain-argument
    call gets the envelope and typed errors (``InvalidArgumentsError`` for bad arguments)."""

    task: TaskSpec
    response_format: str = "content_and_artifact"
    handle_tool_error: bool = True
    handle_validation_error: Any = error_line
    _runtime: "ToolRuntime | None" = PrivateAttr(default=None)

    _python_call: bool = PrivateAttr(default=False)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        tool = self if _is_tool_call(input) or self._python_call else self._for_python()
        return super(TaskTool, tool).invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        tool = self if _is_tool_call(input) or self._python_call else self._for_python()
        return await super(TaskTool, tool).ainvoke(input, config, **kwargs)

    def _for_python(self) -> "TaskTool":
        """This tool as Python callers use it: the envelope returned, errors raised, and (with no
        workspace handed in) the caller's own file paths taken as a shell takes them."""
        tool = self.model_copy(update={"response_format": "content", "handle_tool_error": False,
                                       "handle_validation_error": False})
        tool._python_call = True
        return tool

    def _answer(self, result: dict[str, Any]) -> Any:
        return (summarize(result), result) if self.response_format == "content_and_artifact" else result

    def _run(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        return self._answer(self._runtime.run(self.task, kwargs, config, caller=self._python_call))

    async def _arun(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        return self._answer(await self._runtime.arun(self.task, kwargs, config, caller=self._python_call))

    def can_run(self, model: str | None) -> bool:
        """Whether this tool's executor can run ``model`` (None: its default) without trying it.

        Model selection asks this, so that, say, a local-only policy is offered local models only.
        """
        if self._runtime is None:
            return True
        return self._runtime.executor.can_run(self.name, model)

    def _parse_input(self, tool_input: str | dict[str, Any], tool_call_id: str | None) -> str | dict[str, Any]:
        try:
            return super()._parse_input(tool_input, tool_call_id)
        except ValidationError as exc:
            raise InvalidArgumentsError(self.name, error_line(exc)) from None


class ToolRuntime:
    """What the tools of one ``build_tools`` call share: the executor and the fallback workspace.

    Both are created on first use, so building tools is cheap and needs no network or models.

    Which files a call may read: a workspace handed in (in the call's config, or to ``build_tools``)
    confines every call to its run folder and allowed inputs. Without one, a model's tool call reads
    only the files allowed with ``build_tools(allow=...)``, while a tool called from Python with
    plain arguments is the program's own call and reads the files it names (relative to the current
    directory, as in a shell).
    """

    def __init__(self, executor: Executor | None = None, catalog: "ModelCatalog | None" = None,
                 workspace: "Workspace | None" = None, *, confining: bool | None = None):
        self._executor = executor
        self._catalog = catalog
        self._workspace = workspace
        #: Whether the fallback workspace confines Python callers too (it was handed in by the caller).
        self._confining = workspace is not None if confining is None else confining
        self._lock = threading.Lock()

    @property
    def executor(self) -> Executor:
        with self._lock:
            if self._executor is None:
                from hugginggpt.tools.executors import default_executor

                self._executor = default_executor(catalog=self._catalog)
            return self._executor

    def workspace(self, config: RunnableConfig | None) -> "Workspace":
        """The call's workspace: from the config, else the one given to ``build_tools``, else a default."""
        configured = _configurable(config).get("workspace")
        if configured is not None:
            return configured
        with self._lock:
            if self._workspace is None:
                from hugginggpt.tools.resources import Workspace

                self._workspace = Workspace()
            return self._workspace

    def prepare(self, spec: TaskSpec, args: dict[str, Any], config: RunnableConfig | None, *,
                caller: bool = False) -> TaskCall:
        """Validate ``args`` (filling defaults), resolve media to local files, and build the call.

        ``caller``: the arguments come from the calling program (a plain-argument Python call), not a
        model; with no workspace handed in, its paths are not confined (see the class docstring).
        """
        try:
            values = args_model(spec).model_validate(args).model_dump()
        except ValidationError as exc:
            raise InvalidArgumentsError(spec.name, error_line(exc)) from None
        configured = _configurable(config).get("workspace") is not None
        trusted = caller and not configured and not self._confining
        workspace = self.workspace(config)
        for arg in spec.media_args:
            if values.get(arg.name) is not None:
                values[arg.name] = resolve_media(spec.name, arg, values[arg.name], workspace, caller=trusted,
                                                 hint=not configured)
        model = _configurable(config).get("hf_model")
        return TaskCall(task=spec, args=values, workspace=workspace, model=model)

    def run(self, spec: TaskSpec, args: dict[str, Any], config: RunnableConfig | None, *,
            caller: bool = False) -> dict[str, Any]:
        call = self.prepare(spec, args, config, caller=caller)
        with _typed_errors(spec):
            result = self.executor.run(call)
        return _recorded(check_envelope(result, task=spec.name), call)

    async def arun(self, spec: TaskSpec, args: dict[str, Any], config: RunnableConfig | None, *,
                   caller: bool = False) -> dict[str, Any]:
        call = self.prepare(spec, args, config, caller=caller)
        with _typed_errors(spec):
            result = await self.executor.arun(call)
        return _recorded(check_envelope(result, task=spec.name), call)


def _recorded(result: dict[str, Any], call: TaskCall) -> dict[str, Any]:
    """The envelope with ``ran``: the backend and model that actually ran the call, when the
    executor reported them (``HybridExecutor`` writes them into ``call.options``)."""
    if "backend" not in call.options:
        return result
    ran = {"backend": call.options["backend"], "model": call.options.get("model")}
    if call.options.get("fallbacks"):  # models given up first, each with why (HybridExecutor.run)
        ran["instead_of"] = list(call.options["fallbacks"])
    return {**result, "ran": ran}


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "tool_call" and "args" in value

def build_tools(tasks: Iterable[str] | None = None, *, executor: Executor | None = None,
                catalog: "ModelCatalog | None" = None, workspace: "Workspace | None" = None,
                allow: Iterable[str | os.PathLike] = (), handle_tool_error: bool = True) -> list[TaskTool]:
    """One tool per task (all of the table by default), named after the task.

    ``executor`` defaults to ``default_executor(catalog=catalog)``, created on the first call.
    ``workspace`` is used when a call's config names none, and confines every call to its run
    folder and allowed inputs; without either, a default one is made, and a tool called from Python
    with plain arguments reads the files it is given (relative to the current directory).
    ``allow``: files and folders a model's tool call may read (``create_agent(model,
    build_tools(allow=["photos"]))``), relative ones to the current directory now; added to
    ``workspace`` when one is given. Unknown task names raise ``UnknownTaskError``.
    ``handle_tool_error=False``: a model's tool call raises typed errors too, instead of answering
    with an error ``ToolMessage``.
    """
    specs = list(task_table().values()) if tasks is None else [get_task(name) for name in tasks]
    allowed = [allow] if isinstance(allow, (str, os.PathLike)) else list(allow)
    confining = workspace is not None
    if allowed:
        from hugginggpt.tools.resources import Workspace

        workspace = workspace if workspace is not None else Workspace()
        for path in allowed:
            workspace.allow(path)
    runtime = ToolRuntime(executor, catalog, workspace, confining=confining)
    return [make_tool(spec, runtime, handle_tool_error=handle_tool_error) for spec in specs]


def make_tool(spec: TaskSpec, runtime: ToolRuntime, *, handle_tool_error: bool = True) -> TaskTool:
    """The tool of one task, running through ``runtime``."""
    tool = TaskTool(
        name=spec.name,
        description=tool_description(spec),
        args_schema=args_model(spec),
        task=spec,
        handle_tool_error=handle_tool_error,
        handle_validation_error=error_line if handle_tool_error else False,
        metadata={"task": spec.name, "category": spec.category, "outputs": list(spec.outputs)},
    )
    tool._runtime = runtime
    return tool


def tool_description(spec: TaskSpec) -> str:
    """The task's description, a one-line argument summary, and what it returns."""
    summary = ", ".join(_arg_summary(arg) for arg in spec.args) or "no arguments"
    returns = f"{', '.join(spec.outputs)} ({spec.returns.rstrip('.')})" if spec.returns else ", ".join(spec.outputs)
    return f"{spec.description} Args: {summary}. Returns: {returns}."


def _arg_summary(arg: ArgSpec) -> str:
    kind = "integer" if is_integer(arg) else arg.kind
    if arg.kind == "choice":
        kind = " | ".join(arg.choices or ())
    elif arg.kind == "list":
        kind = f"list of {arg.items or 'text'}"
    if arg.required:
        return f"{arg.name} ({kind})"
    default = "" if arg.default is None else f", default {arg.default}"
    if arg.maximum is not None:
        default += f", at most {arg.maximum:g}"
    return f"{arg.name} ({kind}, optional{default})"


def resolve_media(task: str, arg: ArgSpec, value: str, workspace: "Workspace", *, caller: bool = False,
                  hint: bool = False) -> Path:
    """A media argument as a checked local file path; ``ResourceError`` naming task and argument.

    ``caller``: the path comes from the calling program, not a model (``Workspace.resolve``).
    ``hint``: a refused local path of a workspace with no inputs says how to allow files.
    """
    from hugginggpt.tools.resources import contains_resource_ref

    if contains_resource_ref(value):
        raise ResourceError(task, f"argument {arg.name!r}: unresolved reference {value!r} "
                                  "(references are substituted before a tool runs)")
    try:
        return Path(workspace.resolve(value, arg.kind, caller=caller))
    except ResourceError as exc:
        cause = exc.cause
        if hint and not caller and not workspace.inputs and _refused_path(cause):
            cause += (" (no input files are allowed here: pass them with build_tools(allow=[...]) or a "
                      "Workspace(inputs=[...]) in the config's configurable.workspace)")
        raise ResourceError(task, f"argument {arg.name!r}: {cause}") from None


def _refused_path(cause: str) -> bool:
    return cause.startswith(("file not found:", "path escapes the allowed folders:"))


def _configurable(config: RunnableConfig | None) -> dict[str, Any]:
    return (config or {}).get("configurable") or {}


@contextmanager
def _typed_errors(spec: TaskSpec) -> Iterator[None]:
    """Let ``TaskError``s through; turn an executor bug into one typed line naming the task."""
    try:
        yield
    except TaskError:
        raise
    except Exception as exc:
        raise TaskError(spec.name, error_line(exc)) from exc
