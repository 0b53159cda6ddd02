"""The devices the local-executor tests run on: the CPU always, CUDA wherever torch sees a GPU.

The tests of local task models, diffusion and ControlNet take the ``device`` fixture
(``tests/tools/conftest.py``), so a machine with a GPU runs the same suite on both: the CUDA path
(``default_device()``, float16 diffusion) is tested wherever it exists, unchanged.
"""

from __future__ import annotations


def available_devices() -> list[str]:
    """``["cpu"]``, plus ``"cuda"`` when torch is installed and sees a usable GPU."""
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
