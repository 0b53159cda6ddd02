"""The notebooks run headless from top to bottom (nbclient) and show what they promise.

Each notebook writes into ``HUGGINGGPT_NOTEBOOK_OUT`` (a test folder here), so the tests check the
files behind the outputs too: the agent's trace, the comparison's predictions, tables and plots.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shared import gguf_or_skip, shared_path

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
TASKBENCH = shared_path("taskbench")
CELL_TIMEOUT = 300


def kernel_name() -> str:
    """The ``python3`` kernel, registered for this interpreter when no kernelspec exists yet."""
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        from ipykernel import kernelspec

        kernelspec.install(user=True)
    return "python3"


def execute(name: str) -> nbformat.NotebookNode:
    """Run a notebook in ``notebooks/`` (its working directory) and return it with its outputs."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name=kernel_name(),
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, naming the cell, when one fails
    return notebook


def outputs(notebook: nbformat.NotebookNode, mime: str) -> list[str]:
    """Every output of ``mime`` type (``stream`` for printed text), in cell order."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if mime == "stream" and output["output_type"] == "stream":
                found.append(output["text"])
            elif mime in output.get("data", {}):
                found.append(output["data"][mime])
    return found


def only_trace(out: Path) -> dict:
    traces = list((out / "runs").glob("*/trace.json"))
    assert len(traces) == 1, traces
    return json.loads(traces[0].read_text())


@pytest.fixture
def notebook_env(tmp_path, monkeypatch) -> Path:
    """The notebooks' output folder; the kernel inherits this process's environment."""
    out = tmp_path / "out"
    monkeypatch.setenv("HUGGINGGPT_NOTEBOOK_OUT", str(out))
    for name in ("HUGGINGGPT_NOTEBOOK_GGUF", "HUGGINGGPT_NOTEBOOK_LLM", "HUGGINGGPT_TASKBENCH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HUGGINGGPT_EXECUTION", "local")  # never reach for a remote endpoint
    return out


@pytest.mark.parametrize("name", ["quickstart.ipynb", "agent_comparison.ipynb"])
def test_notebooks_are_saved_without_outputs(name):
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


def test_quickstart_runs_the_tools_and_the_agent_with_the_scripted_llm(notebook_env):
    notebook = execute("quickstart.ipynb")

    tables = "\n".join(outputs(notebook, "text/html"))
    assert "<table" in tables and "image-to-text" in tables and "local/tiny-captioner" in tables
    assert outputs(notebook, "image/png"), "the example picture is displayed"
    printed = "\n".join(outputs(notebook, "stream"))
    assert "scripted chat model" in printed
    for stage in ("plan", "selection", "task_start", "task_end", "response", "final"):
        assert f" {stage} " in printed, stage

    trace = only_trace(notebook_env)
    assert [node["task"] for node in trace["plan"]] == ["image-to-text", "text-to-speech"]
    assert {s["model"] for s in trace["selections"].values()} == {"local/tiny-captioner", "local/tiny-tts"}
    results = trace["results"]
    assert all(r["status"] == "ok" for r in results.values()), results
    audio = Path(results["1"]["result"]["audio"])
    assert audio.is_file() and audio.read_bytes()[:4] == b"RIFF"
    assert "execution" in outputs(notebook, "text/html")[-1]  # the timings table
    assert set(trace["timings"]) >= {"plan", "selection", "execution", "response"}


def _smollm_gguf() -> str:
    return gguf_or_skip("smollm2-135m")


@pytest.mark.slow
def test_quickstart_runs_with_a_real_gguf_controller(notebook_env, monkeypatch):
    monkeypatch.setenv("HUGGINGGPT_NOTEBOOK_GGUF", _smollm_gguf())
    notebook = execute("quickstart.ipynb")

    assert "llama.cpp running SmolLM2-135M" in "\n".join(outputs(notebook, "stream"))
    trace = only_trace(notebook_env)  # a 135M model plans poorly: check the run, not the plan
    assert trace["llm_calls"] and trace["llm_calls"][0]["stage"] == "planning"
    assert trace["usage"]["completion_tokens"] > 0
    assert "error" not in trace


def test_agent_comparison_scores_and_plots_the_three_agents(notebook_env, monkeypatch):
    if not (TASKBENCH / "data.json").is_file():
        pytest.skip(f"TaskBench sample not found at {TASKBENCH} (it lives outside the repository)")
    monkeypatch.setenv("HUGGINGGPT_TASKBENCH", str(TASKBENCH))  # the sample this test found, wherever it lives
    notebook = execute("agent_comparison.ipynb")

    tables = "\n".join(outputs(notebook, "text/html"))
    assert "<table" in tables and "node_f1" in tables and "chain_overall" in tables
    assert len(outputs(notebook, "image/png")) == 3  # metrics, latency, LLM calls
    assert "harness check passed" in "\n".join(outputs(notebook, "stream"))

    summary = json.loads((notebook_env / "summary.json").read_text())["agents"]
    assert set(summary) == {"global", "react", "tools"}
    assert all(s["requests"] == 6 and s["node_f1"] == 1.0 and s["failures"] == 0 for s in summary.values())
    # one planning call per request for the global plan; one per step plus the answer for tool loops
    assert summary["global"]["llm_calls"] == 1.0
    assert summary["react"]["llm_calls"] > 2 and summary["tools"]["llm_calls"] == summary["react"]["llm_calls"]
    for plot in ("metrics", "latency", "llm_calls"):
        assert (notebook_env / f"{plot}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (notebook_env / "predictions" / "react.json").read_text().splitlines()
    assert {json.loads(row)["harness"]["type"] for row in rows} == {"single", "chain", "dag"}
