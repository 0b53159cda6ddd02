"""docs/MCP.md: its client configuration is valid JSON whose command line `hugginggpt` accepts, and so are
the command lines it shows."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from hugginggpt.cli.main import build_parser
from tests.mcp.conftest import ROOT

DOC = (ROOT / "docs" / "MCP.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def test_the_client_configuration_is_json_that_starts_the_mcp_server():
    (config,) = blocks("json")
    server = json.loads(config)["mcpServers"]["hugginggpt"]
    assert server["command"] == "hugginggpt"
    args = build_parser().parse_args(server["args"])
    assert args.command == "mcp" and args.allow == ["/Users/me/Pictures"] and args.llm == "openai:gpt-4o-mini"


@pytest.mark.parametrize("line", [line.split("#")[0].strip() for line in blocks("bash")[0].splitlines()
                                  if line.startswith("hugginggpt mcp")])
def test_the_command_lines_parse(line):
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.command == "mcp"


def test_the_langchain_snippet_names_flags_that_exist():
    (snippet,) = blocks("python")
    listed = re.search(r'"args": (\[.*?\])', snippet).group(1)
    args = build_parser().parse_args(json.loads(listed))
    assert args.audio_as == "resource" and args.allow == ["data"]
