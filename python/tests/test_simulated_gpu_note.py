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


def test_no_note_without_a_simulated_gpu_measured():
    assert notes("[]") == 0
    assert notes("None", backend="none") == 0
