#!/usr/bin/env bash
# Runs every example of examples/ against a build tree (its neardup first on
# PATH, its Python module on PYTHONPATH, Debian's /usr/bin/python3) and checks
# what each one reports: the near duplicates of news.jsonl are n2, n4 and n6
# (whichever way they are found), and --t2s joins the Traditional copies.
#   tests/examples/run.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1
build=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
export PATH=$build:$PATH PYTHONPATH=$build/python
py=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect() {  # FILE LINE: FILE has the line LINE
  grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "$(basename "$1"): no line '$2'"; }
}

bash "$src/examples/jsonl_dedup.sh" "$work/jsonl" >"$work/jsonl.txt" 2>"$work/jsonl.err"
expect "$work/jsonl.txt" "kept ($work/jsonl/unique.jsonl): n1 n3 n5 n7"
expect "$work/jsonl.txt" "near duplicates ($work/jsonl/duplicates.jsonl): n2 n4 n6"
cmp <(grep -v -e '"n2"' -e '"n4"' -e '"n6"' "$src/examples/news.jsonl") "$work/jsonl/unique.jsonl" ||
  fail "unique.jsonl is not the kept input lines"

bash "$src/examples/chinese_t2s.sh" "$work/t2s" >"$work/t2s.txt"
expect "$work/t2s.txt" "without --t2s: 5 of 5 kept: cn-1 tw-1 cn-2 tw-2 cn-3"
expect "$work/t2s.txt" "--t2s: 3 of 5 kept: cn-1 cn-2 cn-3"

$py "$src/examples/crawler.py" "$work/crawl" >"$work/crawl.txt"
for id in n1 n3 n5 n7; do expect "$work/crawl.txt" "new      $id: indexed"; done
for id in n2 n4 n6; do
  grep -q "^skipped  $id: near " "$work/crawl.txt" || { cat "$work/crawl.txt" >&2; fail "crawler: $id"; }
done

if $py -c 'import pandas' 2>/dev/null; then
  $py "$src/examples/pandas_dedup.py" >"$work/pandas.txt"
  expect "$work/pandas.txt" "4 of 7 rows kept: n1, n3, n5, n7"
else
  echo "python3-pandas missing: pandas_dedup.py not run"
  [ "${CI:-}" = true ] && fail "python3-pandas missing under CI=true"
fi
echo "examples: all ran"
