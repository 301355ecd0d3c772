"""Builds the Python module `neardup` with CMake (pyproject.toml, doc/python.md).

    python3 -m pip install --no-build-isolation .     # or: pip wheel --no-build-isolation .

The version is CMake's project version (CMakeLists.txt), the one version of
the project. The extension neardup._neardup is CMake's target neardup_python,
built for the Python that runs this (sys.executable) in build/pip/cmake, or
in $NEARDUP_CMAKE_BUILD_DIR when that names an existing build tree (the
tests reuse theirs). The wheel holds the package python/neardup, the
extension and data/ (the marker words) as neardup/data.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    match = re.search(r"project\(neardup\s+VERSION\s+([0-9.]+)", text)
    if not match:
        sys.exit("setup.py: no `project(neardup VERSION ...)` in CMakeLists.txt")
    return match.group(1)


class CMakeBuildExt(build_ext):
    """Builds neardup_python with CMake and copies it where setuptools wants it."""

    def build_extension(self, ext):
        build_dir = os.environ.get("NEARDUP_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                sys.exit(f"setup.py: $NEARDUP_CMAKE_BUILD_DIR={build_dir} is no CMake build tree")
        else:
            build_dir = ROOT / "build" / "pip" / "cmake"
            if not (build_dir / "CMakeCache.txt").is_file():
                configure = [
                    "cmake", "-S", str(ROOT), "-B", str(build_dir),
                    "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPython_EXECUTABLE={sys.executable}",
                    "-DNEARDUP_BUILD_TESTS=OFF", "-DNEARDUP_BUILD_BENCH=OFF",
                    "-DNEARDUP_BUILD_FUZZ_REPLAY=OFF", "-DNEARDUP_BUILD_MPI=OFF",
                ]
                if shutil.which("ninja"):
                    configure += ["-G", "Ninja"]
                subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "neardup_python",
                        "--parallel", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "neardup" / ("_neardup" + suffix)
        if not built.is_file():
            found = sorted(p.name for p in (build_dir / "python" / "neardup").glob("_neardup*"))
            sys.exit(f"setup.py: {built} was not built (found {found}): the build tree is "
                     f"for another Python than {sys.executable}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


class BuildPyWithData(build_py):
    """Adds data/ (the marker words) to the package as neardup/data."""

    def run(self):
        super().run()
        data = pathlib.Path(self.build_lib) / "neardup" / "data"
        data.mkdir(parents=True, exist_ok=True)
        for f in sorted((ROOT / "data").iterdir()):
            if f.is_file() and f.suffix == ".txt":
                shutil.copyfile(f, data / f.name)


setup(
    version=project_version(),
    packages=["neardup"],
    package_dir={"": "python"},
    package_data={"neardup": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("neardup._neardup", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt, "build_py": BuildPyWithData},
    options={"build": {"build_base": "build/pip"}},
    zip_safe=False,
)
