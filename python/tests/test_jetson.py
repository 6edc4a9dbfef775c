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


GET_SOC = """
import json, time
from zeuscpp.device import get_soc
from zeuscpp.device.soc import Jetson, SoC
from zeuscpp.monitor import ZeusMonitor
soc = get_soc()
assert soc is get_soc() and isinstance(soc, Jetson) and isinstance(soc, SoC)
# A ZeusMonitor's own windows are untouched by the SoC object's (and vice versa).
monitor = ZeusMonitor(sync_execution_with=None)
monitor.begin_window("w")
soc.begin_window("w")
time.sleep(0.3)
w = soc.end_window("w")
m = monitor.end_window("w")
total = soc.get_total_energy_consumption()
try:
    soc.end_window("w")
    again = "no error"
except ValueError as e:
    again = type(e).__name__
print(json.dumps({"metrics": sorted(soc.get_available_metrics()), "w_total": w.total_energy_mj,
                  "w_cpu": w.cpu_energy_mj, "w_gpu": w.gpu_energy_mj, "m_time": m.time,
                  "cumulative": total.total_energy_mj, "again": again}))
"""


def test_get_soc_gives_upstreams_soc_object_on_a_jetson(tmp_path):
    orin_tree(tmp_path)
    result = run(GET_SOC, tmp_path)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["metrics"] == ["cpu_energy_mj", "total_energy_mj"]
    # 7.5 W over at least 0.3 s, in mJ; the GPU rail is absent on this board.
    assert got["w_total"] >= 7.5 * 0.3 * 1e3 * 0.99 and got["w_gpu"] is None
    assert got["w_cpu"] == pytest.approx(got["w_total"] * 2.0 / 7.5, rel=1e-6)
    # Cumulative since get_soc(): at least the window.
    assert got["cumulative"] >= got["w_total"]
    assert got["again"] == "ZeusNotFoundError"


def test_get_soc_raises_without_a_board(tmp_path):
    code = """
from zeuscpp.device import get_soc
from zeuscpp.device.soc import ZeusSoCInitError, jetson_is_available
from zeuscpp.exception import ZeusBaseError
assert not jetson_is_available()
try:
    get_soc()
except ZeusSoCInitError as e:
    assert isinstance(e, ZeusBaseError)
    print("raised:", e)
"""
    result = run(code, tmp_path)  # an empty sysfs tree
    assert result.returncode == 0, result.stderr
    assert "raised: No observable SoC was found on the current machine." in result.stdout


def test_show_env_names_the_board(tmp_path):
    orin_tree(tmp_path)
    env = dict(os.environ, ZEUS_GPU_BACKEND="none", ZEUS_POWERCAP_ROOT="/nonexistent",
               ZEUS_JETSON_SYSFS_ROOT=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "zeuscpp.show_env"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    soc = out.stdout.split("## SoC availability")[1]
    assert "NVIDIA Jetson (ina3221 power monitor)" in soc
    assert "Available metrics: cpu_energy_mj, total_energy_mj" in soc
    assert "no Jetson backend" not in out.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    env["ZEUS_JETSON_SYSFS_ROOT"] = str(empty)
    out = subprocess.run([sys.executable, "-m", "zeuscpp.show_env"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert "No SoC available (no Jetson power rails found" in out.stdout.split("## SoC availability")[1]
