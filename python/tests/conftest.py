"""Fixtures of the neardup module's tests: the CLI the results are compared
with, and the shared THUCNews data (skipped when absent, a failure under
CI=true, as NEARDUP_REQUIRE_SHARED_DATA in tests/testing/test_util.h)."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("NEARDUP_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


def _shared(relative):
    roots = [os.environ.get("NEARDUP_SHARED_DATA"), SOURCE_DIR.parent / "shared" / "data"]
    for root in roots:
        if root and (pathlib.Path(root) / relative).is_file():
            return pathlib.Path(root) / relative
    if os.environ.get("CI") == "true":
        pytest.fail("shared data file %s is absent (../shared/data or $NEARDUP_SHARED_DATA) "
                    "and CI=true: the CI setup must provide it" % relative)
    pytest.skip("shared data file %s is absent" % relative)


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("NEARDUP_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("NEARDUP_CLI (the neardup binary) is not set; run through ctest")

    def run(*args, stdin=None):
        done = subprocess.run([path, *map(str, args)], input=stdin, capture_output=True,
                              check=False)
        assert done.returncode == 0, done.stderr.decode()
        return [json.loads(line) for line in done.stdout.decode().splitlines()]

    return run


@pytest.fixture(scope="session")
def thucnews_path():
    return _shared("zh_thucnews1000.jsonl")


@pytest.fixture(scope="session")
def thucnews(thucnews_path):
    with open(thucnews_path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]
