#!/usr/bin/env bash
# `pip wheel .` and `pip install` of the wheel, as a user does from a clone
# (pyproject.toml, setup.py): into a fresh `python3 -m venv
# --system-site-packages` of Debian's /usr/bin/python3, with Debian's
# setuptools and pip (--no-build-isolation, nothing fetched). The wheel reuses
# BUILD_DIR's extension ($NEARDUP_CMAKE_BUILD_DIR) so the test does not
# compile the library again. Checks the wheel's contents (LICENSE, the data
# files), then imports the installed module and compares its version and
# fingerprints (default method, and `improved`, which reads the wheel's
# marker words) with the CLI's.
#   tests/packaging/wheel.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1
build=$2
work=$3
py=/usr/bin/python3
if ! $py -c 'import venv, setuptools, wheel, pip' 2>/dev/null; then
  echo "python3-venv, python3-setuptools, python3-wheel or python3-pip missing: skipped"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/src"
fail() {
  echo "FAIL: $*" >&2
  [ -f "$work/log.txt" ] && tail -30 "$work/log.txt" >&2
  exit 1
}
# The files setup.py reads, as in a clone (the build tree has the rest).
cp -r "$src"/{setup.py,pyproject.toml,CMakeLists.txt,LICENSE,python,data} "$work/src/"
mkdir -p "$work/src/doc" && cp "$src/doc/python.md" "$work/src/doc/"
$py -m venv --system-site-packages --without-pip "$work/venv"
venv_py=$work/venv/bin/python
(cd "$work" && NEARDUP_CMAKE_BUILD_DIR=$build "$venv_py" -m pip wheel --no-build-isolation --no-deps \
  --no-index -w "$work/dist" "$work/src") >"$work/log.txt" 2>&1 || fail "pip wheel"
whl=$(find "$work/dist" -name 'neardup-*.whl' | head -1)
[ -n "$whl" ] || fail "pip wheel wrote no neardup-*.whl"
"$venv_py" -m zipfile -l "$whl" >"$work/wheel.txt"
for f in neardup/__init__.py neardup/__init__.pyi neardup/py.typed neardup/_neardup \
         neardup/data/marker_words.txt dist-info/LICENSE; do
  grep -qF "$f" "$work/wheel.txt" || { cat "$work/wheel.txt" >&2; fail "the wheel lacks $f"; }
done
"$venv_py" -m pip install --no-deps --no-index "$whl" >>"$work/log.txt" 2>&1 || fail "pip install"

cli=$build/neardup
printf '%s\n' '{"id":"a","text":"近似重复检测是搜索引擎和数据清洗中的常见任务，总之很有用。"}' \
  '{"id":"b","text":"Near-duplicate detection finds pages that say the same thing."}' >"$work/docs.jsonl"
"$cli" fingerprint -q "$work/docs.jsonl" >"$work/cli_default.jsonl"
"$cli" fingerprint -q --method improved "$work/docs.jsonl" >"$work/cli_improved.jsonl"
version=$("$cli" --version)
# From $work, not the source tree: the import must find the installed module.
(cd "$work" && env -u NEARDUP_DATA_DIR -u PYTHONPATH "$venv_py" - "$work" "$version" <<'PY') ||
import json, sys
import neardup
work, version = sys.argv[1], sys.argv[2]
assert neardup.__file__.startswith(work + "/venv/"), neardup.__file__
assert "neardup " + neardup.__version__ == version, (neardup.__version__, version)
docs = [json.loads(line) for line in open(work + "/docs.jsonl", encoding="utf-8")]
for method, name in ((None, "default"), ("improved", "improved")):
    cli = [json.loads(line) for line in open(f"{work}/cli_{name}.jsonl", encoding="utf-8")]
    for doc, want in zip(docs, cli):
        bits = 128 if len(want["fingerprint"]) == 32 else 64
        got = neardup.to_hex(neardup.fingerprint(doc["text"], method=method), bits)
        assert got == want["fingerprint"], (name, doc["id"], got, want)
print("wheel: neardup", neardup.__version__, "from", neardup.__file__, "; fingerprints equal to the CLI's")
PY
  fail "the installed module"
echo "wheel: $(basename "$whl")"
