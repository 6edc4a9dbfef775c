"""python -m zeuscpp.monitor energy|power and python -m zeuscpp.show_env, run as users run them."""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time

import pytest


def start(*args: str, gpus: int = 2, **env: str) -> subprocess.Popen:
    full = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS=str(gpus), COLUMNS="200", **env)
    return subprocess.Popen([sys.executable, "-m", *args], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(stream, pattern: str, timeout: float = 60) -> list[str]:
    """Lines read until one matches pattern."""
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if re.search(pattern, line):
            return lines
    raise AssertionError(f"no line matching {pattern!r} in {lines}")


def test_monitor_power_prints_then_totals_on_ctrl_c():
    proc = start("zeuscpp.monitor", "power", "--update-period", "0.1", "--power-domain", "device_average")
    try:
        lines = wait_for(proc.stdout, r"'GPU1': ")
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "".join(lines))
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    total_time = float(re.search(r"Total time \(s\): ([\d.]+)", out).group(1))
    energy = ast.literal_eval(re.search(r"Total energy \(J\):\s*(\{[^}]*\})", out).group(1))
    assert set(energy) == {"GPU0", "GPU1"}
    # The simulated GPU idles at 300 W: the integral over the samples is at most 300 W x the time.
    assert 0 < energy["GPU0"] <= 300.0 * total_time + 1e-6


def test_monitor_energy_prints_the_measurement_on_ctrl_c():
    proc = start("zeuscpp.monitor", "energy", "--gpu-indices", "1")
    try:
        wait_for(proc.stderr, "Ctrl\\+C")
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Measurement(" in out and re.search(r"gpu_energy=\{\s*1: [\d.]+", out), out


@pytest.mark.parametrize(
    "args, message",
    [
        (["power", "--update-period", "-1"], "positive number of seconds"),
        (["power", "--power-domain", "module"], "invalid choice"),
        (["energy", "--gpu-indices", "7"], "GPU index 7 does not exist"),
        (["frobnicate"], "invalid choice"),
        (["power", "--update-period", "1e308"], "at most 86400"),
        (["power", "--update-period", "nan"], "positive number of seconds"),
        (["energy", "--gpu-indices", "99999999999999999999"], "must be a GPU index"),
        (["power", "--gpu-indices", "-1"], "must be a GPU index"),
        (["energy", "--gpu-indices", "x"], "must be a GPU index"),
    ],
)
def test_monitor_bad_input_exits_2_with_a_message(args, message):
    """One line on stderr, exit 2: no traceback, no usage block."""
    proc = start("zeuscpp.monitor", *args)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_show_env_reports_versions_and_the_index_mapping():
    proc = start("zeuscpp.show_env", gpus=3, CUDA_VISIBLE_DEVICES="2,0")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    sections = [line for line in out.splitlines() if line.startswith("## ")]
    assert sections[:4] == ["## Package availability and versions", "## Device availability",
                            "## CPU availability", "## SoC availability"]
    assert out.splitlines()[0] == "-" * 200  # the terminal's width
    assert re.search(r"Python version: \d+\.\d+", out)
    for framework in ("PyTorch", "JAX", "CuPy"):
        assert re.search(rf"  {framework}: (not available|\S+)", out), framework
    try:
        import torch
    except ImportError:
        assert "PyTorch: not available" in out
    else:
        assert f"PyTorch: {torch.__version__} (with" in out
    assert "CUDA_VISIBLE_DEVICES=2,0" in out and "HIP_VISIBLE_DEVICES=[NOT SET]" in out
    assert "GPU 2 -> GPU 0 (Zeus Simulated GPU)" in out and "GPU 0 -> GPU 1 (Zeus Simulated GPU)" in out
