#!/usr/bin/env bash
# Builds the Debian package of a build tree with `cpack -G DEB`, checks its
# file list (dpkg-deb -c) and declared dependencies (dpkg-deb -f), then runs
# `neardup --version` and `python3 -c "import neardup"` from it: unpacked
# into a temporary root with dpkg -x (PATH-free, LD_LIBRARY_PATH-free: the
# tool and module link the libraries statically; PYTHONPATH points at the
# unpacked dist-packages), or installed for real with dpkg -i when CI=true
# and running as root (removed again afterwards).
#   tests/packaging/deb.sh BUILD_DIR WORK_DIR
set -euo pipefail
command -v dpkg-deb >/dev/null && command -v cpack >/dev/null || {
  echo "dpkg-deb or cpack missing: skipped"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
log=$work/log.txt
fail() {
  echo "FAIL: $*" >&2
  [ -f "$log" ] && tail -40 "$log" >&2
  exit 1
}
(cd "$build" && cpack -G DEB -B "$work/cpack") >"$log" 2>&1 || fail "cpack -G DEB"
deb=$(find "$work/cpack" -maxdepth 1 -name 'neardup_*.deb' | head -1)
[ -n "$deb" ] || fail "cpack wrote no neardup_*.deb"
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./||' >"$work/files.txt"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
prefix=${prefix#/}
pydir=$(sed -n 's/^NEARDUP_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
expect=(
  "$prefix/bin/neardup"
  "$prefix/include/neardup/method.h"
  "$prefix/include/neardup/document_index.h"
  "$prefix/share/neardup/marker_words.txt"
  "neardupConfig.cmake"
  "neardupTargets.cmake"
  "pkgconfig/neardup.pc"
  "libneardup_core.a"
  "libneardup_eval.a"
)
[ -n "$pydir" ] && expect+=("$prefix/$pydir/neardup/__init__.py" "$prefix/$pydir/neardup/__init__.pyi"
                            "$prefix/$pydir/neardup/_neardup")
for f in "${expect[@]}"; do
  grep -qF -- "$f" "$work/files.txt" || { cat "$work/files.txt" >&2; fail "the package lacks $f"; }
done
depends=$(dpkg-deb -f "$deb" Depends)
for d in python3-jieba libicu libopencc libpoppler-cpp libsqlite3 libzstd libstdc++6; do
  grep -qF -- "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
echo "package: $(basename "$deb"), $(wc -l <"$work/files.txt") entries; Depends: $depends"

if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
  dpkg -i "$deb" >>"$log" 2>&1 || fail "dpkg -i"
  trap 'dpkg -r neardup >/dev/null 2>&1 || true' EXIT
  root=""
  pypath=""
else
  dpkg -x "$deb" "$work/root"
  root=$work/root
  pypath=$root/$prefix/$pydir
fi
version=$("$root/$prefix/bin/neardup" --version) || fail "neardup --version"
echo "neardup --version: $version"
if [ -n "$pydir" ]; then
  (cd "$work" && PYTHONPATH=$pypath /usr/bin/python3 -c '
import neardup, sys
assert neardup.__file__.startswith(sys.argv[1]), neardup.__file__
print("python3: import neardup from", neardup.__file__, "fingerprint", neardup.to_hex(neardup.fingerprint("近似重复的文本检测")))
' "${root:-/}") || fail "python3 -c 'import neardup'"
fi
