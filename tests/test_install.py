"""What a user installs (issue 26, part 2): lower bounds next to their own LangChain and Hugging Face
releases, extras split so a hosted controller needs no compiler, the missing extra named in the
error, a LICENSE. Read from pyproject.toml; the hosted path is run with the compiled and the local
extras' packages made unimportable, against a local OpenAI-compatible stand-in server."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hugginggpt.errors import LLMError
from hugginggpt.llm import load_llm
from tests.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirement(spec: str) -> tuple[str, str]:
    name = re.match(r"[A-Za-z0-9_.\-]+", spec).group(0)
    return name.lower().replace("_", "-"), spec[len(name):].split(";")[0].strip()


def test_core_dependencies_have_lower_bounds_and_no_cap_below_the_next_major():
    deps = dict(requirement(spec) for spec in PROJECT["dependencies"])
    # today's releases (langchain 1.5, langchain-core 1.8, huggingface_hub 2) are allowed
    assert deps["langchain"] == ">=1.4.7,<2" and deps["langchain-core"] == ">=1.7.2,<2"
    assert deps["huggingface-hub"] == ">=1.33"
    for name, bounds in deps.items():
        assert ">=" in bounds, name
    assert "networkx" not in deps


def test_nothing_imports_networkx():
    for path in (ROOT / "hugginggpt").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "networkx" for n in names), path


def test_extras_split_the_controllers_and_ci_still_installs_everything_pinned():
    extras = PROJECT["optional-dependencies"]
    assert [requirement(s)[0] for s in extras["openai"]] == ["langchain-openai"]
    assert [requirement(s)[0] for s in extras["huggingface"]] == ["langchain-huggingface"]
    assert [requirement(s)[0] for s in extras["gguf"]] == ["llama-cpp-python"]
    assert extras["llm"] == ["hugginggpt[openai,huggingface,gguf]"]  # the old name installs all three
    (everything,) = extras["all"]
    assert {"local", "llm", "eval", "server"} <= set(everything.removeprefix("hugginggpt[").rstrip("]").split(","))
    # setup.sh (CI) installs .[all,dev] with constraints.txt: every controller package is pinned there
    assert '-c constraints.txt -e ".[all,dev]"' in (ROOT / "setup.sh").read_text()
    pins = dict(requirement(line) for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#"))
    for name in ("langchain", "langchain-core", "huggingface-hub", "langchain-openai", "langchain-huggingface",
                 "llama-cpp-python"):
        assert pins[name].startswith("=="), name


def test_a_license_ships():
    assert PROJECT["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


@pytest.mark.parametrize(("spec", "module", "extra"), [
    ("openai:gpt-4o-mini", "langchain_openai", "openai"),
    ("huggingface:meta-llama/Llama-3.1-8B-Instruct", "langchain_huggingface", "huggingface"),
])
def test_a_missing_controller_package_names_its_extra(spec, module, extra, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` fails as when it is not installed
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    with pytest.raises(LLMError) as caught:
        load_llm(spec)
    assert str(caught.value) == f"the controller {spec} needs the {extra!r} extra: pip install 'hugginggpt[{extra}]'"


def test_the_embedded_controller_without_llama_cpp_names_the_gguf_extra(monkeypatch, tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(LLMError, match=r"the 'gguf' extra: pip install 'hugginggpt\[gguf\]'"):
        load_llm(f"gguf:{path}")


# ------------------------------------------------------- a hosted controller with no compiled extra


#: The packages of the extras a hosted controller does not need: the compiled one and the local ones.
NOT_INSTALLED = ["llama_cpp", "langchain_huggingface", "transformers", "torch", "diffusers", "soundfile",
                 "fastapi", "uvicorn", "matplotlib", "pandas", "controlnet_aux", "cv2", "scipy"]

RUN_WITHOUT = """
import runpy, sys
for name in {blocked!r}:
    sys.modules[name] = None  # `import name` fails as when the package is not installed
sys.argv = ["hugginggpt", *{argv!r}]
runpy.run_module("hugginggpt", run_name="__main__")
"""


def test_run_with_a_hosted_controller_needs_neither_llama_cpp_nor_local_models(tmp_path):
    (tmp_path / "config.toml").write_text("")
    with OpenAIServer() as server:
        argv = ["run", "Say hello", "--llm", "openai:stand-in", "--base-url", server.url, "-q"]
        done = subprocess.run([sys.executable, "-c", RUN_WITHOUT.format(blocked=NOT_INSTALLED, argv=argv)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**_env(), "HUGGINGGPT_HOME": str(tmp_path / "runs"),
                                   "HUGGINGGPT_CONFIG": str(tmp_path / "config.toml")})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Answer: nothing to do\n"  # the stand-in's answer when no task ran
    assert [r["model"] for r in server.requests] == ["stand-in", "stand-in"]  # the plan, then the answer
    # and without the openai extra, the same command says which extra to install
    done = subprocess.run([sys.executable, "-c", RUN_WITHOUT.format(blocked=[*NOT_INSTALLED, "langchain_openai"],
                                                                   argv=argv)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**_env(), "HUGGINGGPT_HOME": str(tmp_path / "runs"),
                               "HUGGINGGPT_CONFIG": str(tmp_path / "config.toml")})
    assert done.returncode == 1
    assert done.stderr == ("hugginggpt: error: the controller openai:stand-in needs the 'openai' extra: "
                           "pip install 'hugginggpt[openai]'\n")


CONTROLNET_BLOCK = """
import runpy, sys
for name in {blocked!r}:
    sys.modules[name] = None
from tests.test_readme_snippets import BLOCKS
(block,) = [b for b in BLOCKS if b.id == "controlnet-1"]
try:
    exec(block.code, {{"__name__": "__readme__"}})
except Exception as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
"""


def test_the_readme_controlnet_block_without_the_local_extra_says_what_to_install(tmp_path):
    """The README's ControlNet block in an install with the openai extra only: one error that names the
    extra, not a riddle (Canny runs only on this machine, and this machine has no transformers or torch)."""
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "example.jpg", tmp_path / "examples" / "example.jpg")
    done = subprocess.run([sys.executable, "-c", CONTROLNET_BLOCK.format(blocked=NOT_INSTALLED)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**_env(), "HUGGINGGPT_HOME": str(tmp_path / "runs"), "PYTHONPATH": str(ROOT)})
    assert done.stdout == ("ModelLoadError: canny-control: no model can run it here: locally, transformers and torch "
                           "not installed: pip install 'hugginggpt[local]'; remotely, the Inference API has no "
                           "canny-control task (it runs only on this machine)\n"), done.stderr


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("HUGGINGGPT_", "OPENAI_"))}


@pytest.mark.slow
def test_a_clean_environment_with_only_the_openai_extra_runs_a_request(tmp_path):
    """A new virtual environment, ``pip install ".[openai]"`` (CI's pins), then ``hugginggpt run`` with a
    hosted controller (a local OpenAI-compatible stand-in): no compiler, no torch, no llama.cpp."""
    import os
    import shutil
    import venv

    source = tmp_path / "src"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                                "tests", "notebooks", "benchmarks", "docs"))
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    environ = {**_env(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    install = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "-c",
                              str(ROOT / "constraints.txt"), f"{source}[openai]"],
                             capture_output=True, text=True, timeout=900, env=environ)
    assert install.returncode == 0, install.stderr[-2000:]
    listed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, timeout=120, env=environ).stdout.lower()
    assert "langchain-openai==" in listed
    assert not any(f"{name}==" in listed for name in ("llama_cpp_python", "llama-cpp-python", "torch", "transformers"))
    (tmp_path / "config.toml").write_text("")
    with OpenAIServer() as server:
        done = subprocess.run([str(bin_dir / "hugginggpt"), "run", "Say hello", "--llm", "openai:stand-in",
                               "--base-url", server.url, "-q"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**environ, "HUGGINGGPT_HOME": str(tmp_path / "runs"),
                                   "HUGGINGGPT_CONFIG": str(tmp_path / "config.toml")})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Answer: nothing to do\n"
    assert [r["model"] for r in server.requests] == ["stand-in", "stand-in"]
