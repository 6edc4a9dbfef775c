"""Fixtures: every test gets fresh devices, simulated by default.

zeuscpp discovers devices once per process (like the Python Zeus's get_gpus()
singleton); `_reset_devices()` makes the next access discover again, so a test
can switch between the simulated GPU and the fake NVML library.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import pytest

os.environ.setdefault("ZEUS_GPU_BACKEND", "sim")
os.environ.pop("CUDA_VISIBLE_DEVICES", None)

from fake_nvml import FakeNvml, fake_nvml_path  # noqa: E402
from zeuscpp._core import device as _device  # noqa: E402

SOURCE_DIR = os.environ.get(
    "ZEUSCPP_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
)


def _fresh_devices(monkeypatch, **env: str) -> None:
    gc.collect()  # monitors of earlier tests release their devices
    _device._reset_devices()
    for key in ("ZEUS_SIM_GPUS", "ZEUS_SIM_MODEL", "ZEUS_NVML_LIBRARY", "ZEUS_POWERCAP_ROOT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


@pytest.fixture(autouse=True)
def sim_gpus(monkeypatch, tmp_path):
    """One simulated GPU and an empty powercap tree (no CPU packages)."""
    empty = tmp_path / "no-powercap"
    empty.mkdir()
    _fresh_devices(monkeypatch, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1", ZEUS_POWERCAP_ROOT=str(empty))
    yield
    gc.collect()
    _device._reset_devices()


@pytest.fixture
def fake_nvml(monkeypatch, tmp_path):
    """The fake NVML library with its defaults (2 H100s at 700 W, limits 200-700 W)."""
    fake = FakeNvml()
    gc.collect()
    _device._reset_devices()
    fake.reset()
    _fresh_devices(
        monkeypatch,
        ZEUS_GPU_BACKEND="nvml",
        ZEUS_NVML_LIBRARY=fake.path,
        ZEUS_POWERCAP_ROOT=str(tmp_path / "no-powercap"),
    )
    (tmp_path / "no-powercap").mkdir(exist_ok=True)
    yield fake
    gc.collect()
    _device._reset_devices()


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120, **kwargs):
    """Runs `code` in a fresh interpreter (this one) with the test environment."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


__all__ = ["FakeNvml", "fake_nvml_path", "run_python", "SOURCE_DIR", "write_powercap"]


def write_powercap(root, package_uj: int, dram_uj: int) -> None:
    """A powercap tree with RAPL package 0 and its DRAM zone at these counter values (rewritable)."""
    zone = root / "intel-rapl" / "intel-rapl:0"
    dram = zone / "intel-rapl:0:0"
    dram.mkdir(parents=True, exist_ok=True)
    for d, name, value in ((zone, "package-0", package_uj), (dram, "dram", dram_uj)):
        (d / "name").write_text(name + "\n")
        (d / "energy_uj").write_text(f"{value}\n")
        (d / "max_energy_range_uj").write_text("262143328850\n")
        (d / "enabled").write_text("1\n")
    for link, target in (("intel-rapl:0", zone), ("intel-rapl:0:0", dram)):
        if not (root / link).exists():
            (root / link).symlink_to(target)
