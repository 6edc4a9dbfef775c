"""A Jetson board measured from Python: Measurement.soc_energy with upstream's names (mJ).

The board is a fake sysfs tree of the Orin layout (INA3221 through hwmon:
in<k>_label, in<k>_input in mV, curr<k>_input in mA); devices are discovered
once per process, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from zeuscpp.device.soc.jetson import JetsonMeasurement


def orin_tree(root) -> None:
    rails = root / "bus" / "i2c" / "drivers" / "ina3221" / "1-0040" / "hwmon" / "hwmon1"
    rails.mkdir(parents=True)
    for k, label, millivolts, milliamps in [(1, "VDD_IN", 5000, 1500), (2, "VDD_CPU_GPU_CV", 5000, 400),
                                           (3, "VDD_SOC", 5000, 300)]:
        (rails / f"in{k}_label").write_text(label + "\n")
        (rails / f"in{k}_input").write_text(str(millivolts))
        (rails / f"curr{k}_input").write_text(str(milliamps))


WINDOW = """
import json, time
from zeuscpp.monitor import ZeusMonitor
monitor = ZeusMonitor(sync_execution_with=None)
monitor.begin_window("w")
time.sleep(0.3)
m = monitor.end_window("w")
s = m.soc_energy
print(json.dumps({"type": type(s).__name__, "time": m.time, "cpu": s.cpu_energy_mj,
                  "gpu": s.gpu_energy_mj, "total": s.total_energy_mj, "gpus": monitor.gpu_indices}))
"""


def run(code: str, root) -> subprocess.CompletedProcess:
    env = dict(os.environ, ZEUS_GPU_BACKEND="none", ZEUS_POWERCAP_ROOT="/nonexistent",
               ZEUS_JETSON_SYSFS_ROOT=str(root))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_a_window_on_a_jetson_reports_its_rails_in_millijoules(tmp_path):
    orin_tree(tmp_path)
    result = run(WINDOW, tmp_path)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["type"] == "JetsonMeasurement" and got["gpus"] == []
    # Constant power: the integral is power x window time (7.5 W and 2 W).
    assert got["total"] == pytest.approx(7.5 * got["time"] * 1e3, rel=1e-6)
    assert got["cpu"] == pytest.approx(2.0 * got["time"] * 1e3, rel=1e-6)
    assert got["gpu"] is None  # Orin's GPU shares the CPU rail (upstream's rule)
    assert got["time"] >= 0.3


def test_show_env_lists_the_rails(tmp_path):
    orin_tree(tmp_path)
    result = run("import json, zeuscpp.device as d; print(json.dumps(d.environment_report()['jetson']))", tmp_path)
    assert result.returncode == 0, result.stderr
    jetson = json.loads(result.stdout)
    assert jetson["driver"] == "ina3221"
    assert [(r["rail"], r["label"]) for r in jetson["rails"]] == [("cpu", "VDD_CPU_GPU_CV"), ("total", "VDD_IN")]


def test_jetson_measurement_behaves_like_upstreams():
    a = JetsonMeasurement(cpu_energy_mj=10.0, gpu_energy_mj=None, total_energy_mj=30.0)
    b = JetsonMeasurement(cpu_energy_mj=4.0, gpu_energy_mj=None, total_energy_mj=10.0)
    assert a - b == JetsonMeasurement(6.0, None, 20.0)
    a.zero_all_fields()
    assert a == JetsonMeasurement(0.0, None, 0.0)
    with pytest.raises(TypeError):
        _ = a - 3
