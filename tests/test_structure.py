"""The package's shape: imports point down the layers, no modules import each other, and the
controller LLM loads without the agents. Read from the source with ``ast`` (every import statement,
in functions too), and in a fresh interpreter for what an import loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hugginggpt"


def _loaded_by(statement: str) -> list[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent)
    return [m for m in json.loads(out.stdout) if m.startswith("hugginggpt")]


def test_the_llm_layer_loads_without_the_agents_or_the_tools():
    loaded = _loaded_by("import hugginggpt.llm")
    assert "hugginggpt.llm.specs" in loaded
    assert not [m for m in loaded if m.startswith(("hugginggpt.agent", "hugginggpt.tools"))], loaded
