"""LangChain's standard tool tests, for representative tasks of each kind of input and output.

The tools run through ``ToyExecutor`` (tests/tools/conftest.py) on real files in a workspace
made once for this module, so the integration tests exercise real calls without any network.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from hugginggpt.tools import build_tools
from hugginggpt.tools.resources import Workspace

from .conftest import ToyExecutor, write_png

_ROOT = Path(tempfile.mkdtemp(prefix="hugginggpt-standard-tools-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
_WORKSPACE = Workspace(root=_ROOT)
_PICTURE = write_png(_ROOT / "scene.png", "red", size=(24, 24), box=(2, 2, 9, 9))


def _tool(task: str):
    (tool,) = build_tools([task], executor=ToyExecutor(), workspace=_WORKSPACE)
    return tool


class _TaskToolTests:
    task: str
    example: dict

    @property
    def tool_constructor(self):
        return _tool(self.task)

    @property
    def tool_invoke_params_example(self) -> dict:
        return dict(self.example)


class TestTextClassificationUnit(_TaskToolTests, ToolsUnitTests):
    task, example = "text-classification", {"text": "I love it", "top_k": 1}


class TestTextClassificationIntegration(_TaskToolTests, ToolsIntegrationTests):
    task, example = "text-classification", {"text": "I love it", "top_k": 1}


class TestQuestionAnsweringUnit(_TaskToolTests, ToolsUnitTests):
    task, example = "question-answering", {"question": "Who?", "context": "Ann did it."}


class TestQuestionAnsweringIntegration(_TaskToolTests, ToolsIntegrationTests):
    task, example = "question-answering", {"question": "Who?", "context": "Ann did it."}


class TestImageClassificationUnit(_TaskToolTests, ToolsUnitTests):
    task, example = "image-classification", {"image": str(_PICTURE), "top_k": 2}


class TestImageClassificationIntegration(_TaskToolTests, ToolsIntegrationTests):
    task, example = "image-classification", {"image": str(_PICTURE), "top_k": 2}


class TestObjectDetectionUnit(_TaskToolTests, ToolsUnitTests):
    task, example = "object-detection", {"image": str(_PICTURE), "threshold": 0.5}


class TestObjectDetectionIntegration(_TaskToolTests, ToolsIntegrationTests):
    task, example = "object-detection", {"image": str(_PICTURE), "threshold": 0.5}


class TestTextToSpeechUnit(_TaskToolTests, ToolsUnitTests):
    task, example = "text-to-speech", {"text": "Hello there"}


class TestTextToSpeechIntegration(_TaskToolTests, ToolsIntegrationTests):
    task, example = "text-to-speech", {"text": "Hello there"}
