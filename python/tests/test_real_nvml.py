"""The Python package with NVIDIA's real NVML library (driver branch 535).

The build fetches the library from Debian non-free into <build>/real_nvml
(tests/real_nvml/CMakeLists.txt). On a host without an NVIDIA driver it loads
and answers nvmlInit_v2 with "Driver Not Loaded": ``import zeuscpp`` must work,
discovery must go on without GPUs and say why, ``ZeusMonitor`` must measure
what is there, and asking for NVML explicitly must raise the driver error.
Each case runs in a fresh interpreter, so discovery sees the real library.

Skipped with the reason when the library could not be fetched, except under
CI=true, where that fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_python


def _real_nvml_dir() -> Path:
    explicit = os.environ.get("ZEUS_REAL_NVML_DIR")
    if explicit:
        return Path(explicit)
    # ZEUSCPP_FAKE_NVML is <build>/tests/fakes/nvml/libnvidia-ml.so.1.
    return Path(os.environ["ZEUSCPP_FAKE_NVML"]).parents[3] / "real_nvml"


def _real_nvml_library() -> str:
    base = _real_nvml_dir()
    library = base / "lib" / "libnvidia-ml.so.1"
    reason_file = base / "UNAVAILABLE"  # written by the build when it could not fetch it
    if reason_file.exists():
        reason = reason_file.read_text().strip()
    elif library.exists() and (base / ".complete").exists():
        return str(library)
    else:
        reason = f"{library} is missing"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the real NVML library is not available: {reason}")
    pytest.skip(f"the real NVML library is not available: {reason}")


@pytest.fixture
def real_nvml(tmp_path):
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this host has an NVIDIA kernel driver; these cases cover hosts without one")
    library = _real_nvml_library()
    powercap = tmp_path / "powercap" / "intel-rapl:0"
    powercap.mkdir(parents=True)
    (powercap / "name").write_text("package-0\n")
    (powercap / "energy_uj").write_text("1000000\n")
    (powercap / "max_energy_range_uj").write_text("262143328850\n")
    (powercap / "enabled").write_text("1\n")
    return {
        "ZEUS_NVML_LIBRARY": library,
        "ZEUS_GPU_BACKEND": "auto",
        "ZEUS_AMDSMI_LIBRARY": "/nonexistent/libamd_smi.so",
        "ZEUS_POWERCAP_ROOT": str(tmp_path / "powercap"),
    }


def test_import_and_discovery_go_on_without_gpus_and_say_why(real_nvml):
    r = run_python(
        """
        import json
        import zeuscpp
        from zeuscpp.device import get_gpus, get_cpus, notes, environment_report
        report = environment_report()
        print(json.dumps({"gpus": len(get_gpus()), "cpus": len(get_cpus()), "notes": notes(),
                          "details": report["details"], "backend": report["gpu_backend"]}))
        """,
        env=real_nvml,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["gpus"] == 0
    assert out["cpus"] == 1
    assert out["backend"] == "none"
    # One line says what is missing; the details say what NVML answered.
    assert any(n.endswith("continuing without GPUs") for n in out["notes"]), out
    assert any("'Driver Not Loaded'" in d for d in out["details"]), out


def test_zeus_monitor_measures_the_cpu_without_gpus(real_nvml):
    r = run_python(
        """
        from zeuscpp.monitor import ZeusMonitor
        m = ZeusMonitor(sync_execution_with=None)
        assert m.gpu_indices == [], m.gpu_indices
        m.begin_window("w")
        result = m.end_window("w")
        print(sorted(result.gpu_energy), sorted(result.cpu_energy))
        """,
        env=real_nvml,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[] [0]"


def test_asking_for_nvml_raises_the_driver_error(real_nvml):
    r = run_python(
        """
        import zeuscpp.exception as exc
        from zeuscpp.device import get_gpus
        try:
            get_gpus()
        except exc.ZeusGPUDriverNotLoadedError as e:
            print("raised:", e)
        """,
        env={**real_nvml, "ZEUS_GPU_BACKEND": "nvml"},
    )
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("raised: no NVIDIA driver found"), r.stdout
    assert "nvmlInit_v2 returned 'Driver Not Loaded' (NVML error 9)" in line
