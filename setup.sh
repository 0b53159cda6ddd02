#!/usr/bin/env bash
# One setup command: installs hugginggpt with the embedded local LLM (llama.cpp), local task
# models (transformers, CPU torch), the comparison harness (with the ecosystem's agents as peers: the
# peers extra) and the test tools.
# Run it inside a virtual environment of your choice (python3 -m venv .venv && . .venv/bin/activate).
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3}"

# torch first, pinned: an unpinned torch (or one pulled in by another package) brings gigabytes of
# CUDA wheels. Set TORCH_SPEC to choose another build (e.g. "torch==2.13.0+cu128" with an index).
"$PY" -m pip install ${PIP_ARGS:-} "${TORCH_SPEC:-torch==2.13.0}"

# llama-cpp-python compiles llama.cpp from source (about 11 minutes on 2 cores), with the CMAKE_ARGS that
# llama-cmake-args.sh prints (no multimodal part; on x86-64 no Intel AMX kernels, which stop the process on
# some virtual machines). A CMAKE_ARGS of your own replaces them.
OWN_CMAKE_ARGS="${CMAKE_ARGS:-}"
export CMAKE_ARGS="${CMAKE_ARGS:-$(sh ./llama-cmake-args.sh)}"

# constraints.txt pins the LangChain / Hugging Face set that resolves without minutes of backtracking.
"$PY" -m pip install ${PIP_ARGS:-} -c constraints.txt -e ".[all,dev]"

# pip keeps a llama-cpp-python that is already installed, or reuses a wheel it cached, even when that
# build predates the flags above: ask the installed build whether it carries AMX kernels and, if so,
# compile it again (same version, no cache) with this script's CMAKE_ARGS. A CMAKE_ARGS of your own is
# left as you gave it.
if [ -z "$OWN_CMAKE_ARGS" ] && [ "$(uname -m)" = x86_64 ] && "$PY" -c '
import re, sys, llama_cpp
sys.exit(0 if re.search(rb"AMX\w* = 1", llama_cpp.llama_print_system_info()) else 1)'; then
  LLAMA_VERSION="$("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
  echo "llama-cpp-python $LLAMA_VERSION was built with AMX kernels: compiling it again without them"
  "$PY" -m pip install ${PIP_ARGS:-} --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==$LLAMA_VERSION"
fi

"$PY" -c "import hugginggpt, llama_cpp, transformers, langchain_core; print('hugginggpt setup ok')"

cat <<'NEXT'
Next: the embedded controller's model (1.1 GB, once; the first run fetches it too), then a first run:
  hf download Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
  hugginggpt run "Describe examples/example.jpg" --file examples/example.jpg --execution local
NEXT
