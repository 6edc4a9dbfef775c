"""Measuring the simulated GPU from Python says, once, what it can and cannot see."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("always")
    from zeuscpp.monitor import ZeusMonitor
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            ZeusMonitor(gpu_indices={gpus}, cpu_indices=[], sync_execution_with=None)
    print(sum("simulated GPU" in str(w.message) and "execute(work_units)" in str(w.message)
              for w in caught))
    """
)


def notes(gpus: str, backend: str = "sim") -> int:
    env = dict(os.environ, ZEUS_GPU_BACKEND=backend, ZEUS_SIM_GPUS="1")
    child = subprocess.run([sys.executable, "-c", SCRIPT.format(gpus=gpus)], env=env, capture_output=True,
                           text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    return int(child.stdout.strip())


def test_a_monitor_on_the_simulated_gpu_says_so_once_per_process():
    assert notes("[0]") == 1


BUSY = textwrap.dedent(
    """
    import time, warnings
    from zeuscpp.monitor import ZeusMonitor
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[], sync_execution_with=None)
    monitor.begin_window("idle script")
    time.sleep(0.3)  # the script does nothing on the GPU
    m = monitor.end_window("idle script")
    print(m.gpu_energy[0] / m.time)
    print(" ".join(str(w.message) for w in caught))
    """
)


def test_the_note_names_the_power_the_model_actually_draws():
    # The default model idles at 90 W and is busy at 300 W: a window of a
    # script that does nothing draws the busy power, and the note says so.
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1")
    child = subprocess.run([sys.executable, "-c", BUSY], env=env, capture_output=True, text=True,
                           timeout=60)
    assert child.returncode == 0, child.stderr
    watts, message = child.stdout.strip().split("\n", 1)
    assert abs(float(watts) - 300.0) < 3.0
    assert "busy power" in message
    assert "idle power" not in message


def test_no_note_without_a_simulated_gpu_measured():
    assert notes("[]") == 0
    assert notes("None", backend="none") == 0
