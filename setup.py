"""Builds the zeuscpp package: the pure-Python modules from python/zeuscpp and the
extension module zeuscpp._core, compiled by the project's own CMake build in
its measurement-only configuration (ZEUS_MINIMAL: no Boost, SQLite, libpqxx,
libcurl, OpenSSL or MPI; docs/install.md), and the `zeus` command with its data,
installed into the environment's bin/ and share/zeus/.

    pip install --no-build-isolation --no-index .            # into the current environment
    pip install --no-build-isolation --no-index --target DIR .

Environment: ZEUSCPP_FULL=1 (the full configuration: every binding, and the
`zeusd` command too), ZEUSCPP_BUILD_TYPE (default Release), ZEUSCPP_CMAKE_ARGS
(extra arguments for CMake), ZEUSCPP_BUILD_DIR (reuse a CMake build directory
across installs; default: one under build-pip/), CMAKE_BUILD_PARALLEL_LEVEL.
Progress ("zeuscpp: [12/80] ...") goes to the terminal even when pip hides
the build's output.
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
FULL = os.environ.get("ZEUSCPP_FULL", "") not in ("", "0")
# The commands the build puts here for data_files (installed into <prefix>/bin).
COMMANDS_DIR = ROOT / "build-pip" / "commands"
COMMANDS = ["zeus", "zeusd"] if FULL else ["zeus"]


def progress_stream():
    """pip captures a build's output (shown only with -v): write progress to the
    terminal itself when there is one, else to stderr."""
    try:
        return open("/dev/tty", "w", buffering=1)
    except OSError:
        return sys.stderr


def run_with_progress(cmd: list[str]) -> None:
    """Runs the build, showing ninja's [n/total] lines as one updating line and
    any failure in full."""
    out = progress_stream()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        tail = (tail + [line])[-200:]
        match = re.match(r"\[(\d+)/(\d+)\] (.*)", line)
        if match:
            done, total, what = match.groups()
            out.write(f"\rzeuscpp: [{done}/{total}] {what[:70]:<70}")
            out.flush()
    out.write("\n")
    out.flush()
    if proc.wait() != 0:
        sys.stderr.write("".join(tail))
        raise subprocess.CalledProcessError(proc.returncode, cmd)


def data_files() -> list[tuple[str, list[str]]]:
    """The commands (bin/) and the data they read (share/zeus/<set>/..., where
    zeus::data_dir looks: next to bin/)."""
    files = [("bin", [str((COMMANDS_DIR / c).relative_to(ROOT)) for c in COMMANDS])]
    for path in sorted((ROOT / "data").rglob("*")):
        if path.is_file():
            rel = path.parent.relative_to(ROOT / "data")
            files.append((str(Path("share/zeus") / rel), [str(path.relative_to(ROOT))]))
    return files


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
            f"-DZEUS_MINIMAL={'OFF' if FULL else 'ON'}",
            # A one-off build: parse CLI11, pybind11 and nlohmann_json once per target.
            "-DZEUS_PRECOMPILED_HEADERS=ON",
            # -O2 (CMake's Release means -O3: slower to build, no faster here);
            # the CLI and the bindings -O1 (ZEUS_GLUE_COMPILE_OPTIONS).
            "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
            # A user's compiler may warn where ours does not: that must not fail
            # an install (the project's own builds keep warnings as errors).
            "-DZEUS_WERROR=OFF",
        ]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("ZEUSCPP_CMAKE_ARGS", ""))
        if not (build_dir / "CMakeCache.txt").exists() or "ZEUSCPP_CMAKE_ARGS" in os.environ:
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        targets = [ext.target, "zeus_cli"] + (["zeusd"] if FULL else [])
        run_with_progress(["cmake", "--build", str(build_dir), "--target", *targets, "-j", jobs])
        COMMANDS_DIR.mkdir(parents=True, exist_ok=True)
        for command in COMMANDS:
            shutil.copy2(build_dir / "bin" / command, COMMANDS_DIR / command)
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
    data_files=data_files(),
    zip_safe=False,
)
