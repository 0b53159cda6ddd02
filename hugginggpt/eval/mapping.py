"""TaskBench tool names <-> our task names, and our plans <-> TaskBench's graph format.

TaskBench names Hugging Face tasks in title case ("Image Classification", "Text-to-Image"); the
task table uses the Hub's pipeline tags ("image-classification"). Most names map mechanically; the
few that do not are listed in ``_RENAMED`` with the reason. TaskBench arguments are positional
values (``["example.jpg", "<node-0>"]``); ours are named (``{"image": "<resource>-0"}``). Both
conversions are here so planning-only comparisons can be scored by ``scoring.py``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from hugginggpt.eval.scoring import content_type
from hugginggpt.tools.resources.refs import CANONICAL_REF, RESOURCE_REF
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec

# TaskBench tool -> (our task, why the name differs)
_RENAMED = {
    "Image Editing": ("image-text-to-image", "an image edited by a text instruction is the Hub's image-text-to-image"),
}
#: The argument kinds whose values a TaskBench node lists (the task table's kinds).
_VALUE_KINDS = ("text", *MEDIA_KINDS, "list", "table")


def hub_name(tool: str) -> str:
    """The Hub-style slug of a TaskBench tool name: "Text-to-Image" -> "text-to-image"."""
    return re.sub(r"[\s_]+", "-", tool.strip()).lower()


class TaskBenchMapping:
    """Both directions between the tools of a TaskBench domain and the tasks of our task table."""

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | Iterable[str],
                 tasks: Mapping[str, Any] | None = None):
        if tasks is None:
            from hugginggpt.tools import task_table

            tasks = task_table()
        self.tasks = tasks
        self.tools = dict(tools) if isinstance(tools, Mapping) else {name: {"id": name} for name in tools}
        self._to_task: dict[str, str] = {}
        self._unmatched: dict[str, str] = {}
        for tool in self.tools:
            task, reason = _RENAMED.get(tool, (hub_name(tool), ""))
            if task in tasks:
                self._to_task[tool] = task
            else:
                self._unmatched[tool] = f"no task {task!r} in the task table{': ' + reason if reason else ''}"
        self._to_tool = {task: tool for tool, task in self._to_task.items()}

    def to_task(self, tool: str) -> str | None:
        """Our task name for a TaskBench tool (``_`` and spaces tolerated), None when there is none."""
        tool = tool.replace("_", " ")
        return self._to_task.get(tool)

    def to_tool(self, task: str) -> str | None:
        """The TaskBench tool for one of our tasks, None when the domain has no such tool."""
        return self._to_tool.get(task)

    def domain_tasks(self) -> list[str]:
        """Our tasks that the domain's tools map to, in the order of ``tool_desc.json`` (no duplicates)."""
        return list(dict.fromkeys(self._to_task[tool] for tool in self.tools if tool in self._to_task))

    def domain_specs(self) -> dict[str, TaskSpec]:
        """The specs of ``domain_tasks``, each as the domain's tool reads its inputs: a table argument of a
        tool whose ``input-type`` names no table but one media kind reads that kind (TaskBench's "Tabular
        Classification" classifies a table shown in an image, where our task reads a table file). A plan
        is validated against these, so that a gold graph of the domain stays a runnable plan."""
        specs = {}
        for tool in self.tools:
            task = self._to_task.get(tool)
            if task is None or task in specs:
                continue
            spec = self.tasks[task]
            inputs = self.tools[tool].get("input-type") or []
            media = [kind for kind in dict.fromkeys(inputs) if kind in MEDIA_KINDS]
            if "table" not in inputs and len(media) == 1 and any(a.kind == "table" for a in spec.args):
                args = [a.model_copy(update={"kind": media[0], "description": f"The {media[0]} showing the table."})
                        if a.kind == "table" else a for a in spec.args]
                spec = spec.model_copy(update={"args": args})
            specs[task] = spec
        return specs

    def unmatched(self) -> dict[str, str]:
        """TaskBench tools with no task in our table, and why."""
        return dict(self._unmatched)

    def output_kind(self, tool: str) -> str:
        """The kind a tool's output has in TaskBench (its first output type; "text" when unknown)."""
        outputs = self.tools.get(tool, {}).get("output-type") or ["text"]
        return outputs[0]

    # ----- our plan -> TaskBench prediction -----

    def plan_to_prediction(self, sample_id: str, plan: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """An agent plan (``[{"task","id","dep","args"}]``) as a TaskBench prediction row."""
        index_of = {_as_int(step.get("id"), i): i for i, step in enumerate(plan)}
        names = [self.to_tool(str(step.get("task"))) or str(step.get("task")) for step in plan]
        nodes, links = [], []
        for i, step in enumerate(plan):
            arguments = self.plan_arguments(str(step.get("task")), step.get("args") or {}, index_of)
            nodes.append({"task": names[i], "arguments": arguments})
            for dep in step.get("dep") or []:
                j = index_of.get(_as_int(dep, -1))
                if j is not None and j != i:
                    links.append({"source": names[j], "target": names[i]})
        steps = [f"Step {i + 1}: {name}" for i, name in enumerate(names)]
        return {"id": sample_id, "result": {"task_steps": steps, "task_nodes": nodes, "task_links": links}}

    def plan_arguments(self, task: str, args: Mapping[str, Any], index_of: Mapping[int, int]) -> list[Any]:
        """Our named arguments as TaskBench's positional values, references as ``<node-k>``.

        Kept: the text, media, table and list arguments the plan set, in the table's order; options
        (numbers, choices) are not arguments in TaskBench. For a task the domain has a tool for, only
        the required ones: a TaskBench tool takes exactly its inputs (``input-type``), and our optional
        settings (``tgt_lang``, ``negative_prompt``) have no place there. Unknown tasks keep every
        argument given.
        """
        spec = self.tasks.get(task)
        if spec is None:
            chosen = list(args.items())
        else:
            in_domain = self.to_tool(task) is not None
            chosen = [(a.name, args[a.name]) for a in spec.args
                      if a.name in args and a.kind in _VALUE_KINDS and (a.required or not in_domain)]
        values: list[Any] = []
        for _, value in chosen:
            for item in value if isinstance(value, list) else [value]:
                values.append(_to_node_refs(item, index_of) if isinstance(item, str) else item)
        return values

    # ----- TaskBench sample -> our plan -----

    def sample_to_plan(self, nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """A ground-truth graph as our plan (ids = node positions): each value goes to the first free
        argument of its kind, else to any free value argument; values that fit nowhere are left out."""
        plan = []
        for i, node in enumerate(nodes):
            tool = str(node.get("task", ""))
            task = self.to_task(tool) or hub_name(tool)
            spec = self.tasks.get(task)
            args: dict[str, Any] = {}
            deps: set[int] = set()
            for value in node.get("arguments") or []:
                kind, value = self._read_value(value, nodes, deps)
                name = _free_slot(spec, kind, args) if spec is not None else f"arg{len(args)}"
                if name is None:
                    continue
                if spec is not None and spec.arg(name).kind == "list":
                    args.setdefault(name, []).append(value)
                else:
                    args[name] = value
            deps.discard(i)
            plan.append({"task": task, "id": i, "dep": sorted(deps) or [-1], "args": args})
        return plan

    def _read_value(self, value: Any, nodes: Sequence[Mapping[str, Any]], deps: set[int]) -> tuple[str, Any]:
        """The kind of a TaskBench value, and the value with ``<node-j>`` as ``<resource>-j``."""
        if not isinstance(value, str):
            return "text", value

        def replace(match: re.Match) -> str:
            j = int(match.group("id"))
            if not 0 <= j < len(nodes):
                return match.group(0)
            deps.add(j)
            return f"<resource>-{j}"

        converted = RESOURCE_REF.sub(replace, value)
        whole = RESOURCE_REF.fullmatch(value.strip())
        if whole and converted != value:
            referenced = str(nodes[int(whole.group("id"))].get("task", "")).replace("_", " ")
            return self.output_kind(referenced), converted
        return content_type(value), converted


def _free_slot(spec: Any, kind: str, filled: Mapping[str, Any]) -> str | None:
    """The argument of ``spec`` a value of ``kind`` goes to: a free one of that kind (required
    first), a list of that kind, else any free value argument."""
    ordered = sorted((a for a in spec.args if a.kind in _VALUE_KINDS), key=lambda arg: not arg.required)
    for arg in ordered:
        if arg.kind == kind and arg.name not in filled:
            return arg.name
    for arg in ordered:
        if arg.kind == "list" and (arg.items or "text") == kind:
            return arg.name
    for arg in ordered:
        if arg.name not in filled and arg.kind != "list":
            return arg.name
    return None


def _to_node_refs(value: str, index_of: Mapping[int, int]) -> str:
    def replace(match: re.Match) -> str:
        k = index_of.get(int(match.group("id")))
        return f"<node-{k}>" if k is not None else match.group(0)

    return CANONICAL_REF.sub(replace, value)


def _as_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
