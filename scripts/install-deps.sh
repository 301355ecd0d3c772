#!/usr/bin/env bash
# Installs the Debian 12 packages that neardup builds, tests and runs with.
# Run as root (or with sudo available). Safe to run again.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # libraries linked by neardup
  libicu-dev          # NFKC normalization and case folding, Unicode character classes
  libopencc-dev libopencc-data  # Traditional -> Simplified Chinese
  libxxhash-dev       # XXH3 feature hashes and file checksums
  libssl-dev          # SHA-256 and MD5 (OpenSSL's libcrypto)
  zlib1g-dev          # gzip-compressed input (man pages)
  nlohmann-json3-dev  # JSONL input and output
  libcli11-dev        # the command-line parser
  libsqlite3-dev      # the block store
  libzstd-dev         # compression of stored blocks; zstd-compressed input
  liblzma-dev         # xz-compressed input (.xz corpora: Wikipedia, Common Crawl derivatives)
  libbz2-dev          # bzip2-compressed input (.bz2 corpora: Wikipedia dumps)
  libzip-dev libpugixml-dev  # .docx text extraction
  libpoppler-cpp-dev  # .pdf text extraction
  libcpp-httplib-dev  # neardup serve's HTTP server (and the client of its tests and load generator)
  # neardup-mpi (doc/distributed.md): Open MPI's headers and libraries, and mpirun for its
  # tests (CI runs them as root: --allow-run-as-root); without them neardup-mpi is not built
  libopenmpi-dev openmpi-bin
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  libfaiss-dev        # benchmark only: the index anchor of bench/compare_anchors.sh
  python3 python3-jieba  # the reference segmenter; also neardup's default dictionary data
  # the Python module (python/): pybind11 and Python's headers to build it,
  # pytest for its tests, numpy (optional at run time) for fingerprint_batch's arrays
  pybind11-dev python3-dev python3-pytest python3-numpy
  # the .deb packages (cpack -G DEB): dpkg-shlibdeps computes their library dependencies;
  # help2man writes the man pages from --help
  dpkg-dev help2man
  # pip install . / pip wheel . with Debian's build backend (--no-build-isolation), and the
  # fresh venv the wheel test installs into
  python3-setuptools python3-wheel python3-pip python3-venv
  # examples/pandas_dedup.py (a DataFrame deduplicated with the module)
  python3-pandas
  # the default corpus of the quick start
  manpages-zh
  # plots of `neardup eval` reports (F1 against k, distance histograms); optional at run time
  gnuplot-nox
)

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-deps.sh: run as root (or install sudo)" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
