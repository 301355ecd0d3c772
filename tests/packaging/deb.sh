#!/usr/bin/env bash
# Builds the Debian packages of a build tree with `cpack -G DEB` (one per
# install component: neardup, libneardup-dev, python3-neardup, neardup-mpi),
# checks each one's file list (dpkg-deb -c) and Depends (dpkg-deb -f): every
# package holds its copyright file, no file is in two packages, neardup-mpi
# depends on openmpi-bin. Then it runs `neardup --help`, `neardup-mpi
# --version` (with an MPI that cannot start: parsed before MPI_Init) and
# `python3 -c 'import neardup'` from the packages unpacked into one temporary
# root with dpkg -x (the tools link the library statically; PYTHONPATH points
# at the unpacked dist-packages), or installed for real with dpkg -i when
# CI=true and running as root (removed again afterwards).
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
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
(cd "$build" && cpack -G DEB -B "$work/cpack") >"$log" 2>&1 || fail "cpack -G DEB"
prefix=$(cache CMAKE_INSTALL_PREFIX)
prefix=${prefix#/}
pydir=$(cache NEARDUP_PYTHON_INSTALL_DIR)
have_man=$([ -n "$(cache HELP2MAN)" ] && [ "$(cache HELP2MAN)" != HELP2MAN-NOTFOUND ] && echo 1 || true)
have_mpi=$([ -x "$build/neardup-mpi" ] && echo 1 || true)

packages=(neardup libneardup-dev)
[ -n "$pydir" ] && packages+=(python3-neardup)
[ -n "$have_mpi" ] && packages+=(neardup-mpi)

# What each package must hold (grep -F patterns on its file list) and
# declare (in Depends), and what it must not hold.
declare -A expect depends
expect[neardup]="$prefix/bin/neardup
$prefix/share/neardup/marker_words.txt
$prefix/share/bash-completion/completions/neardup"
depends[neardup]="python3-jieba libopencc-data libicu libopencc libpoppler-cpp libsqlite3 libzstd libstdc++6"
expect[libneardup-dev]="$prefix/include/neardup/method.h
$prefix/include/neardup/document_index.h
cmake/neardup/neardupConfig.cmake
cmake/neardup/neardupConfigVersion.cmake
cmake/neardup/neardupTargets.cmake
pkgconfig/neardup.pc
pkgconfig/neardup-core.pc
pkgconfig/neardup-shared.pc
libneardup_core.a
libneardup_eval.a
lib/libneardup.so.0
lib/libneardup.so"
depends[libneardup-dev]="neardup (= libxxhash-dev libicu-dev"
expect[python3-neardup]="$prefix/$pydir/neardup/__init__.py
$prefix/$pydir/neardup/__init__.pyi
$prefix/$pydir/neardup/_neardup"
depends[python3-neardup]="neardup (= python3 (>="
expect[neardup-mpi]="$prefix/bin/neardup-mpi
$prefix/share/bash-completion/completions/neardup-mpi"
depends[neardup-mpi]="neardup (= openmpi-bin"
if [ -n "$have_man" ]; then
  expect[neardup]+=$'\n'"$prefix/share/man/man1/neardup.1.gz"$'\n'"$prefix/share/man/man1/neardup-dedup.1.gz"
  expect[neardup-mpi]+=$'\n'"$prefix/share/man/man1/neardup-mpi.1.gz"
fi
: >"$work/all_files.txt"
for p in "${packages[@]}"; do
  deb=$(find "$work/cpack" -maxdepth 1 -name "${p}_*.deb" | head -1)
  [ -n "$deb" ] || fail "cpack wrote no ${p}_*.deb: $(ls "$work/cpack")"
  [ "$(dpkg-deb -f "$deb" Package)" = "$p" ] || fail "$deb: Package is not $p"
  # Files and links (a link's own name: the field before "->").
  dpkg-deb -c "$deb" | awk '$1 ~ /^l/ {print $(NF-2)} $1 ~ /^-/ {print $NF}' | sed 's|^\./||' \
    >"$work/$p.files"
  expect[$p]+=$'\n'"$prefix/share/doc/$p/copyright"
  while IFS= read -r f; do
    grep -qF -- "$f" "$work/$p.files" || { cat "$work/$p.files" >&2; fail "$p lacks $f"; }
  done <<<"${expect[$p]}"
  grep -q "Apache License, Version 2.0" <(dpkg-deb --fsys-tarfile "$deb" |
    tar -xO "./$prefix/share/doc/$p/copyright") || fail "$p: copyright does not state the licence"
  dep=$(dpkg-deb -f "$deb" Depends)
  for d in ${depends[$p]}; do
    grep -qF -- "$d" <<<"$dep" || fail "$p: Depends lacks $d: $dep"
  done
  cat "$work/$p.files" >>"$work/all_files.txt"
  echo "$p: $(wc -l <"$work/$p.files") files; Depends: $dep"
done
# Each file in one package only; the tool does not ship the library's parts.
dups=$(sort "$work/all_files.txt" | uniq -d)
[ -z "$dups" ] || fail "files in two packages: $dups"
! grep -E '\.(a|h)$|\.so' "$work/neardup.files" || fail "neardup holds library files"
! grep -F bin/neardup-mpi "$work/neardup.files" || fail "neardup holds neardup-mpi"

if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
  dpkg -i "$work"/cpack/*.deb >>"$log" 2>&1 || fail "dpkg -i"
  trap 'dpkg -r "${packages[@]}" >/dev/null 2>&1 || true' EXIT
  root=""
  pypath=""
else
  for deb in "$work"/cpack/*.deb; do dpkg -x "$deb" "$work/root"; done
  root=$work/root
  pypath=$root/$prefix/$pydir
fi
"$root/$prefix/bin/neardup" --help >"$work/help.txt" || fail "neardup --help"
grep -q "^Subcommands:" "$work/help.txt" || fail "neardup --help lists no subcommands"
version=$("$root/$prefix/bin/neardup" --version) || fail "neardup --version"
echo "neardup --version: $version"
# The man pages hold the options of --help; the completion completes
# subcommands and options from the packaged tool.
if [ -n "$have_man" ]; then
  zcat "$root/$prefix/share/man/man1/neardup-dedup.1.gz" | grep -q 'unique\\-out' ||
    fail "neardup-dedup.1 lacks --unique-out"
fi
completions=$(PATH=$root/$prefix/bin:$PATH bash -c '
  source "$1"
  complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _neardup; echo "${COMPREPLY[*]}"; }
  complete_words neardup ded; complete_words neardup index bu; complete_words neardup dedup --unique-o
' _ "$root/$prefix/share/bash-completion/completions/neardup")
[ "$completions" = $'dedup\nbuild\n--unique-out' ] || fail "bash completion: $completions"
if [ -n "$have_mpi" ]; then
  # An MPI that would fail to start (no such transport): --version and --help
  # must not start it.
  mpi_version=$(OMPI_MCA_pml=no-such-pml "$root/$prefix/bin/neardup-mpi" --version) ||
    fail "neardup-mpi --version"
  [ "$mpi_version" = "neardup-mpi ${version#neardup }" ] || fail "neardup-mpi --version: $mpi_version"
  OMPI_MCA_pml=no-such-pml "$root/$prefix/bin/neardup-mpi" --help >/dev/null || fail "neardup-mpi --help"
  echo "neardup-mpi --version: $mpi_version"
fi
if [ -n "$pydir" ]; then
  (cd "$work" && PYTHONPATH=$pypath /usr/bin/python3 -c '
import neardup, sys
assert neardup.__file__.startswith(sys.argv[1]), neardup.__file__
assert "neardup " + neardup.__version__ == sys.argv[2], (neardup.__version__, sys.argv[2])
print("python3: import neardup", neardup.__version__, "from", neardup.__file__)
' "${root:-/}" "$version") || fail "python3 -c 'import neardup'"
fi
