#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds tests/consumer
# against it with find_package(neardup COMPONENTS core), checks that its link
# line names none of the higher layers' libraries, and runs it; then builds
# and runs pkgconfig_main.cc twice: with find_package(neardup) and
# neardup::neardup, and with `pkg-config --cflags --libs neardup` alone (the
# relocated neardup.pc).
#   tests/consumer/run.sh BUILD_DIR WORK_DIR [FLAGS]
# FLAGS (compile and link) are those the library was built with that a program
# must share, e.g. -fsanitize=address,undefined for a sanitizer build.
set -euo pipefail
build=$1
work=$2
flags=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
log=$work/log.txt
run() {
  if ! "$@" >>"$log" 2>&1; then
    echo "FAIL: $*" >&2
    cat "$log" >&2
    exit 1
  fi
}
run cmake --install "$build" --prefix "$work/prefix"
run cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
run cmake --build "$work/build"
link=$(ninja -C "$work/build" -t commands core_consumer | tail -1)
for lib in icu opencc poppler sqlite zstd zip pugixml libz neardup_text neardup_nlp neardup_engine \
           neardup_store neardup_eval; do
  if grep -qi -- "$lib" <<<"$link"; then
    echo "FAIL: the neardup::core consumer links $lib:" >&2
    echo "$link" >&2
    exit 1
  fi
done
"$work/build/core_consumer"
echo "core consumer: built and linked with neardup::core alone"

run cmake -S "$here" -B "$work/build-all" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DNEARDUP_CONSUMER_ALL=ON -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
run cmake --build "$work/build-all"
"$work/build-all/all_consumer"
echo "all consumer: built with find_package(neardup) and neardup::neardup"

pc_dir=$(dirname "$(find "$work/prefix" -name neardup.pc | head -1)")
export PKG_CONFIG_PATH=$pc_dir
pc_flags=$(pkg-config --cflags --libs neardup)
# shellcheck disable=SC2086  # pkg-config's output is a list of flags
run "${CXX:-c++}" -std=c++20 $flags "$here/pkgconfig_main.cc" -o "$work/pkgconfig_consumer" $pc_flags
"$work/pkgconfig_consumer"
core_flags=$(pkg-config --libs neardup-core)
if grep -qiE -- 'icu|poppler|sqlite|opencc' <<<"$core_flags"; then
  echo "FAIL: pkg-config --libs neardup-core: $core_flags" >&2
  exit 1
fi
echo "pkg-config consumer: built with pkg-config neardup alone"
