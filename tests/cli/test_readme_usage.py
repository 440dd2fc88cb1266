"""Every `attnlab` command line in the README parses with the real parser (no drift)."""

import re
import shlex
from pathlib import Path

from attnlab.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_command_lines() -> list[str]:
    blocks = re.findall(r"```sh\n(.+?)\n```", README.read_text(), flags=re.S)
    lines = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split("  #")[0].split(" > ")[0].strip()  # a comment, a redirection: the shell's
            if line.startswith("attnlab "):
                lines.append(line)
    return lines


def test_readme_documents_each_subcommand():
    documented = {shlex.split(line)[1] for line in readme_command_lines()}
    assert {
        "trace", "heads", "generate", "block", "logits", "census", "ablate", "patch", "lens", "flash",
        "speculate", "kv-cache",
    } <= documented


def test_every_readme_command_line_parses():
    parser = build_parser()
    for line in readme_command_lines():
        args = parser.parse_args(shlex.split(line)[1:])  # raises on an unknown flag
        assert args.command == shlex.split(line)[1]
