"""The package's shape: imports point down the layers, no modules import each other, and the
controller LLM loads without the agents. Read from the source with ``ast`` (every import statement,
in functions too), and in a fresh interpreter for what an import loads."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hugginggpt"

#: The layers, bottom first: a module may import from its own layer and the ones below it.
LAYERS = (
    ("hugginggpt.errors", "hugginggpt.redact", "hugginggpt.paths", "hugginggpt.lazy", "hugginggpt.prompts",
     "hugginggpt.extras"),
    ("hugginggpt.config",),
    ("hugginggpt.llm",),
    ("hugginggpt.tools",),
    ("hugginggpt.agent",),
    ("hugginggpt.eval",),
    ("hugginggpt.build",),
    ("hugginggpt.server", "hugginggpt.mcp"),
    ("hugginggpt.cli", "hugginggpt.__main__"),  # `python -m hugginggpt`: the command
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


# ------------------------------------------------------------------ settings: one table, one reader

SETTINGS_OWNER = "hugginggpt.config"
VARIABLE = re.compile(r"\bHUGGINGGPT_[A-Z0-9_]*[A-Z0-9]\b")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes in ``tree`` (text for people, not code)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_only_the_settings_owner_spells_a_variable_name_in_code():
    """No module but ``hugginggpt.config`` writes a ``HUGGINGGPT_*`` name in its code (strings it reads
    or shows): the others ask ``config.env``/``config.value``/``config.var``. Docstrings and comments may
    name a variable for people."""
    spelled = []
    for name, path in _module_names().items():
        if name == SETTINGS_OWNER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        spelled += [f"{name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and "HUGGINGGPT_" in node.value]
    assert spelled == []


def test_no_module_but_the_settings_owner_reads_the_environment_for_a_variable():
    """``os.environ`` / ``os.getenv`` with a ``HUGGINGGPT_*`` name appear in ``hugginggpt.config`` only."""
    reads = []
    for name, path in _module_names().items():
        if name == SETTINGS_OWNER:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ("environ" in line or "getenv" in line) and ("HUGGINGGPT" in line or "_ENV" in line):
                reads.append(f"{name}:{number}: {line.strip()}")
    assert reads == []


def test_the_settings_table_lists_every_variable_the_package_names():
    """Each ``HUGGINGGPT_*`` name anywhere in the package (code, docstrings, comments, prompts) is a row
    of ``config.TABLE``, and each row is spelled once."""
    from hugginggpt import config

    names = [setting.name for setting in config.TABLE]
    assert len(names) == len(set(names))
    found = {}
    for path in PACKAGE.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".md", ".json", ".yaml", ".html", ".js"):
            for variable in VARIABLE.findall(path.read_text(encoding="utf-8", errors="replace")):
                found.setdefault(variable, str(path.relative_to(PACKAGE.parent)))
    assert {name: where for name, where in found.items() if name not in names} == {}
    assert set(names) <= set(found)


def test_the_configuration_doc_holds_the_rendered_settings_table():
    """docs/CONFIGURATION.md shows ``config.settings_markdown()`` as it is now. To refresh it:
    ``python -c "from hugginggpt.config import settings_markdown; print(settings_markdown())"``."""
    from hugginggpt.config import settings_markdown

    doc = (PACKAGE.parent / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    assert settings_markdown() in doc


def test_the_plan_schema_is_made_in_tools_schemas_only():
    """The plan's JSON schema has one home, ``tools/schemas.py``: no other module writes a schema's
    ``maxItems`` or ``anyOf`` (``agent/observations.py`` only reads a tool schema's ``anyOf``, and
    ``llm/json_grammar.py`` a schema's ``maxItems``, to write its grammar)."""
    owners = {"hugginggpt.tools.schemas", "hugginggpt.agent.observations", "hugginggpt.llm.json_grammar"}
    written = sorted(f"{name}: {node.value}" for name, path in _module_names().items() if name not in owners
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.Constant) and node.value in ("maxItems", "anyOf"))
    assert written == []


def test_the_agent_registry_is_config_s_only():
    """Our agents are registered once, in ``config.AGENT_CLASSES`` (name -> module, class): no other module
    spells an agent's class or module as a string, or lists the agents' names itself (the CLI, the server,
    ``build``, ``hugginggpt.agent`` and ``eval.compare`` read the registry)."""
    from hugginggpt.config import AGENT_CLASSES

    spelled = {part for entry in AGENT_CLASSES.values() for part in entry}
    names = set(AGENT_CLASSES)
    owners = {"hugginggpt.config", *(module for module, _ in AGENT_CLASSES.values())}  # an agent may name itself
    found = []
    for name, path in _module_names().items():
        if name in owners:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in spelled:
                found.append(f"{name}: {node.value!r}")
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if names <= values:
                    found.append(f"{name}: a list of the agents' names")
    assert found == []


# ------------------------------------------------------------------ one home per policy


def _attribute_uses(attribute: str, package: str = "hugginggpt") -> dict[str, int]:
    """How often each module under ``package`` names ``.attribute`` (a call or a read)."""
    uses: dict[str, int] = {}
    for name, path in _module_names().items():
        if name == package or name.startswith(package + "."):
            count = sum(1 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                        if isinstance(node, ast.Attribute) and node.attr == attribute)
            if count:
                uses[name] = count
    return uses


def test_the_tool_call_policy_has_one_home():
    """Every tool call of every agent is reported by ``agent/tool_call.invoke_tool``: no other module of
    the agents emits a task's start, end or failure, or puts a deadline on a call."""
    for event in ("TASK_START", "TASK_END", "TASK_FAILED"):
        assert set(_attribute_uses(event, "hugginggpt.agent")) == {"hugginggpt.agent.tool_call"}, event
    assert set(_attribute_uses("timeout", "hugginggpt.agent")) == {"hugginggpt.agent.tool_call"}


def test_the_stage_bookkeeping_has_one_home():
    """A stage's time and its trace fields are written by the run (``AgentRun.stage``), not by the stages:
    no module but ``agent/run.py`` calls a trace's ``timing`` or ``set``."""
    assert set(_attribute_uses("timing")) == {"hugginggpt.agent.run"}
    setters = {name for name, path in _module_names().items()
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set"
               and "trace" in ast.unparse(node.func.value)}
    assert setters == {"hugginggpt.agent.run"}
