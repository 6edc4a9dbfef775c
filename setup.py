"""Builds the zeuscpp package: the pure-Python modules from python/zeuscpp and the
extension module zeuscpp._core, compiled by the project's own CMake build.

    pip install --no-build-isolation .            # into the current environment
    pip install --no-build-isolation --target DIR .

Environment: ZEUSCPP_BUILD_TYPE (default Release), ZEUSCPP_CMAKE_ARGS (extra
arguments for CMake), ZEUSCPP_BUILD_DIR (reuse a CMake build directory across
installs; default: one under build-pip/), CMAKE_BUILD_PARALLEL_LEVEL.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
(ROOT / "build-pip").mkdir(exist_ok=True)  # setuptools' build and egg-info dirs (git-ignored)


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*zeus_cpp\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("cannot find the project version in CMakeLists.txt")
    return match.group(1)


class CMakeExtension(Extension):
    """An extension whose binary comes from a CMake target."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    """Configures the project with only the Python module enabled and builds its target."""

    def build_extension(self, ext: CMakeExtension) -> None:
        build_dir = Path(os.environ.get("ZEUSCPP_BUILD_DIR") or Path(self.build_temp).resolve() / "cmake")
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            f"-DCMAKE_BUILD_TYPE={os.environ.get('ZEUSCPP_BUILD_TYPE', 'Release')}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DZEUS_BUILD_PYTHON=ON", "-DZEUS_BUILD_TESTS=OFF", "-DZEUS_BUILD_BENCHMARKS=OFF",
        ]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("ZEUSCPP_CMAKE_ARGS", ""))
        if not (build_dir / "CMakeCache.txt").exists() or "ZEUSCPP_CMAKE_ARGS" in os.environ:
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", ext.target, "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "zeuscpp").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"CMake did not produce zeuscpp/_core*.so in {build_dir}")
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], destination)


setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=find_packages("python", include=["zeuscpp", "zeuscpp.*"]),
    package_data={"zeuscpp": ["py.typed", "*.pyi", "*/*.pyi"]},
    ext_modules=[CMakeExtension("zeuscpp._core", "zeuscpp_core")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
    zip_safe=False,
)
