"""The package's shape: imports point down the layers, no modules import each other, and the
controller LLM loads without the agents. Read from the source with ``ast`` (every import statement,
in functions too), and in a fresh interpreter for what an import loads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hugginggpt"

#: The layers, bottom first: a module may import from its own layer and the ones below it.
LAYERS = (
    ("hugginggpt.errors", "hugginggpt.redact", "hugginggpt.paths", "hugginggpt.lazy", "hugginggpt.prompts"),
    ("hugginggpt.config",),
    ("hugginggpt.llm",),
    ("hugginggpt.tools",),
    ("hugginggpt.agent",),
    ("hugginggpt.eval",),
    ("hugginggpt.build",),
    ("hugginggpt.server", "hugginggpt.mcp_server"),
    ("hugginggpt.cli",),
)


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    return names


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source (``from X import Y`` counts
    as importing the module X.Y when there is one, else X)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {module for module in found if module in modules and module != name}


def _graph() -> dict[str, set[str]]:
    modules = _module_names()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    for rank, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return 0  # the package itself: its version only


def test_the_graph_reads_the_package():
    graph = _graph()
    assert "hugginggpt.agent.run" in graph["hugginggpt.agent.global_plan"]
    assert "hugginggpt.tools.executors.local_tasks" in graph["hugginggpt.tools.executors.local"]
    assert len(graph) > 100


def test_no_two_modules_import_each_other():
    graph = _graph()
    pairs = sorted({tuple(sorted((a, b))) for a, outs in graph.items() for b in outs if a in graph.get(b, ())})
    assert pairs == []


def test_no_import_cycles():
    """No module reaches itself through the imports of others (a longer circle than a pair)."""
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_imports_point_down_the_layers():
    graph = _graph()
    upward = sorted(f"{a} -> {b}" for a, outs in graph.items() for b in outs
                    if _layer(b) > _layer(a) and a != "hugginggpt")
    assert upward == []


def _loaded_by(statement: str) -> list[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent)
    return [m for m in json.loads(out.stdout) if m.startswith("hugginggpt")]


def test_the_llm_layer_loads_without_the_agents_or_the_tools():
    loaded = _loaded_by("import hugginggpt.llm")
    assert "hugginggpt.llm.specs" in loaded
    assert not [m for m in loaded if m.startswith(("hugginggpt.agent", "hugginggpt.tools"))], loaded


def test_stage_event_names_are_spelled_only_in_events():
    """The names only a stage event has are written as strings in ``agent/events.py`` alone; the rest
    of the package uses its constants."""
    from hugginggpt.agent import events as ev

    names = {ev.LLM_STEP, ev.PARSE_ERROR, ev.TASK_START, ev.TASK_END, ev.TASK_FAILED, ev.TASK_SKIPPED}
    spelled = sorted(f"{name}: {node.value}" for name, path in _module_names().items() if name != ev.__name__
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.Constant) and node.value in names)
    assert spelled == []
