#!/usr/bin/env python3
"""Checks (or rewrites) the command examples of the user docs against the tool.

A fenced block that follows the line

    <!-- example: checked by scripts/readme_examples.py -->

holds commands, each on a line starting with "$ " (continued by lines ending
in a backslash), each followed by its output. The script runs every command
with bash, in a temporary directory, with the given neardup first on PATH,
and compares what it prints (standard output and standard error) with the
block. `--update` writes the tool's output into the file instead.

    scripts/readme_examples.py --neardup build/neardup README.md            # check: exit 1 on a difference
    scripts/readme_examples.py --neardup build/neardup --update README.md   # regenerate
"""

import argparse
import difflib
import os
import pathlib
import subprocess
import sys
import tempfile

MARKER = "<!-- example: checked by scripts/readme_examples.py -->"


def parse_block(lines):
    """[(command lines, output lines)] of one block's lines."""
    examples = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"expected a '$ ' command line, found {lines[i]!r}")
        command = [lines[i]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        while output and output[-1] == "":
            output.pop()
        examples.append((command, output))
    return examples


def run(command, bindir, workdir):
    text = "\n".join(command)[2:]  # without "$ "
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}")
    result = subprocess.run(["bash", "-c", text], cwd=workdir, env=env, capture_output=True,
                            text=True, timeout=120)
    out = (result.stdout + result.stderr).rstrip("\n")
    return out.split("\n") if out else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--neardup", required=True, help="the neardup binary to run")
    parser.add_argument("--update", action="store_true", help="rewrite the outputs in place")
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    bindir = str(pathlib.Path(args.neardup).resolve().parent)
    failed = 0
    checked = 0
    for path in args.files:
        lines = path.read_text(encoding="utf-8").split("\n")
        out_lines = []
        i = 0
        while i < len(lines):
            out_lines.append(lines[i])
            if lines[i].strip() != MARKER:
                i += 1
                continue
            fence = i + 1
            if fence >= len(lines) or not lines[fence].startswith("```"):
                sys.exit(f"{path}:{i + 1}: the marker is not followed by a fenced block")
            end = fence + 1
            while end < len(lines) and lines[end] != "```":
                end += 1
            if end == len(lines):
                sys.exit(f"{path}:{fence + 1}: unterminated block")
            try:
                examples = parse_block(lines[fence + 1:end])
            except ValueError as e:
                sys.exit(f"{path}:{fence + 2}: {e}")
            new_block = []
            with tempfile.TemporaryDirectory() as workdir:
                for command, want in examples:
                    got = run(command, bindir, workdir)
                    checked += 1
                    if got != want:
                        failed += 1
                        print(f"{path}:{fence + 2}: the output of `{command[0][2:]}` differs "
                              f"from the tool's:", file=sys.stderr)
                        sys.stderr.writelines(
                            line + "\n" for line in difflib.unified_diff(
                                want, got, "documented", "neardup prints", lineterm=""))
                    if new_block:
                        new_block.append("")
                    new_block += command + got
            out_lines.append(lines[fence])
            out_lines += new_block
            out_lines.append("```")
            i = end + 1
        if args.update:
            path.write_text("\n".join(out_lines), encoding="utf-8")
    if args.update:
        print(f"readme_examples: {checked} examples written")
        return 0
    print(f"readme_examples: {checked} examples checked, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
