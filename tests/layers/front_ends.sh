#!/bin/bash
# The layer check (cmake/check_layers.cmake) on the front ends: the tree
# passes, and a tools/neardup or python/ file that includes a src/ header
# fails it, named with the header. tools/neardup_mpi is exempt (pending,
# issue 23). Usage: front_ends.sh CMAKE SOURCE_DIR WORK_DIR
set -euo pipefail
cmake=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"

"$cmake" -DSOURCE_DIR="$src" -DSTAMP="$work/tree.checked" -P "$src/cmake/check_layers.cmake"

# A tree of front-end files only (no layers to check): public headers and a
# header of the file's own folder are fine, a src/ header is not.
for front in tools/neardup python; do
  tree=$work/$(echo "$front" | tr / _)
  mkdir -p "$tree/$front" "$tree/tools/neardup_mpi"
  printf '#include "neardup/status.h"\n#include "local.h"\n' >"$tree/$front/good.cc"
  : >"$tree/$front/local.h"
  printf '#include "dedup/stages.h"\n' >"$tree/tools/neardup_mpi/exempt.cc"
  "$cmake" -DSOURCE_DIR="$tree" -DSTAMP="$tree/ok" -P "$src/cmake/check_layers.cmake"
  printf '#include "neardup/status.h"\n#include "util/thread_pool.h"\n' >"$tree/$front/bad.cc"
  if "$cmake" -DSOURCE_DIR="$tree" -DSTAMP="$tree/bad" -P "$src/cmake/check_layers.cmake" \
      >"$tree/out" 2>&1; then
    echo "FAIL: $front/bad.cc includes util/thread_pool.h and the check passed" >&2
    exit 1
  fi
  if ! grep -q "$front/bad.cc: includes \"util/thread_pool.h\", which is not a public header" \
      "$tree/out"; then
    echo "FAIL: the check's message does not name $front/bad.cc and its include:" >&2
    cat "$tree/out" >&2
    exit 1
  fi
  if grep -q "good.cc\|exempt.cc" "$tree/out"; then
    echo "FAIL: the check refused a file it should accept:" >&2
    cat "$tree/out" >&2
    exit 1
  fi
done
echo "ok: the front ends include public headers only, and the check refuses a src/ header"
