#!/bin/bash
# The layer check (cmake/check_layers.cmake) on the front ends: the tree
# passes, and a tools/neardup, tools/neardup_mpi or python/ file that
# includes a src/ header fails it, named with the header. tools/neardup_mpi
# may include the command line's shared headers (common.h, ...), the others
# may not. Usage: front_ends.sh CMAKE SOURCE_DIR WORK_DIR
set -euo pipefail
cmake=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"

"$cmake" -DSOURCE_DIR="$src" -DSTAMP="$work/tree.checked" -P "$src/cmake/check_layers.cmake"

# A tree of front-end files only (no layers to check): public headers and a
# header of the file's own folder are fine, a src/ header is not.
for front in tools/neardup tools/neardup_mpi python; do
  tree=$work/$(echo "$front" | tr / _)
  mkdir -p "$tree/$front"
  printf '#include "neardup/status.h"\n#include "local.h"\n' >"$tree/$front/good.cc"
  : >"$tree/$front/local.h"
  if [ "$front" = tools/neardup_mpi ]; then
    printf '#include "common.h"\n#include "dedup_stages.h"\n' >>"$tree/$front/good.cc"
  fi
  "$cmake" -DSOURCE_DIR="$tree" -DSTAMP="$tree/ok" -P "$src/cmake/check_layers.cmake"
  for header in util/thread_pool.h dedup/stages.h; do
    printf '#include "neardup/status.h"\n#include "%s"\n' "$header" >"$tree/$front/bad.cc"
    if "$cmake" -DSOURCE_DIR="$tree" -DSTAMP="$tree/bad" -P "$src/cmake/check_layers.cmake" \
        >"$tree/out" 2>&1; then
      echo "FAIL: $front/bad.cc includes $header and the check passed" >&2
      exit 1
    fi
    if ! grep -q "$front/bad.cc: includes \"$header\", which is not a public header" \
        "$tree/out"; then
      echo "FAIL: the check's message does not name $front/bad.cc and its include:" >&2
      cat "$tree/out" >&2
      exit 1
    fi
    if grep -q "good.cc" "$tree/out"; then
      echo "FAIL: the check refused a file it should accept:" >&2
      cat "$tree/out" >&2
      exit 1
    fi
  done
  rm "$tree/$front/bad.cc"
done

# The command line's shared headers are neardup-mpi's only: another front end
# that includes one (from outside its folder) is refused.
tree=$work/python_shared
mkdir -p "$tree/python"
printf '#include "common.h"\n' >"$tree/python/bad.cc"
if "$cmake" -DSOURCE_DIR="$tree" -DSTAMP="$tree/bad" -P "$src/cmake/check_layers.cmake" \
    >"$tree/out" 2>&1; then
  echo "FAIL: python/bad.cc includes common.h (tools/neardup's) and the check passed" >&2
  exit 1
fi
echo "ok: the front ends include public headers only, and the check refuses a src/ header"
