"""`pip install --no-build-isolation --target DIR .` installs a package that imports.

setup.py builds the extension with CMake; here it reuses this build's directory
(ZEUSCPP_BUILD_DIR) so the test costs a copy, not a compile. A from-scratch
install (setup.py configuring its own build) is the same code path plus the
configure step; docs/python.md shows both.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR


def test_pip_install_into_a_target_directory(tmp_path):
    build_dir = os.path.dirname(os.path.abspath(os.environ["PYTHONPATH"].split(os.pathsep)[0]))  # <build>
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        pytest.skip("needs the CMake build directory")
    target = tmp_path / "site"
    env = dict(os.environ, ZEUSCPP_BUILD_DIR=build_dir, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--target", str(target),
         SOURCE_DIR],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    installed = target / "zeuscpp"
    assert (installed / "py.typed").exists() and (installed / "monitor" / "energy.pyi").exists()
    assert list(installed.glob("_core*.so"))
    check = subprocess.run(
        [sys.executable, "-c",
         "import zeuscpp, zeuscpp.monitor, zeuscpp.optimizer.power_limit; print(zeuscpp.__file__)"],
        env=dict(env, PYTHONPATH=str(target), ZEUS_GPU_BACKEND="sim"), capture_output=True, text=True,
        cwd=tmp_path,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip().startswith(str(target))
    # The zeus command comes with it, and finds its data where pip put it
    # (bin/../share/zeus), not in the source tree.
    zeus = target / "bin" / "zeus"
    assert zeus.exists() and os.access(zeus, os.X_OK), sorted(p.name for p in target.iterdir())
    assert (target / "share" / "zeus" / "zeus-traces" / "summary_power_a40.csv").exists()
    version = subprocess.run([str(zeus), "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip(), version.stderr
