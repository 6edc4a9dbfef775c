"""A daemon thread inside a zeuscpp call when the interpreter exits.

Monitoring threads are common in training scripts. At exit, CPython ends a
daemon thread that tries to take the GIL back by unwinding its stack; a C++
frame that forbids exceptions on that path used to turn this into
std::terminate (exit 134, "terminate called without an active exception"),
losing the script's own exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from zeuscpp.device import get_gpus
    from zeuscpp.monitor import ZeusMonitor

    gpu = get_gpus().simulated(0)
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    started = threading.Event()

    def busy():
        while True:
            started.set()
            gpu.execute(gpu.throughput * 0.2)  # 0.2 s with the GIL released
            monitor.begin_window("w", sync_execution=False)
            monitor.end_window("w", sync_execution=False)

    for _ in range(4):
        threading.Thread(target=busy, daemon=True).start()
    started.wait()
    time.sleep(0.05)
    print("leaving", flush=True)
    sys.exit(int(sys.argv[1]))
    """
)


@pytest.mark.parametrize("code", [0, 5])
def test_the_scripts_exit_code_survives_daemon_threads_in_calls(code):
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1")
    for _ in range(3):  # the race is at exit: try it a few times
        child = subprocess.run([sys.executable, "-c", SCRIPT, str(code)], env=env, capture_output=True,
                               text=True, timeout=60)
        assert "terminate called" not in child.stderr, child.stderr
        assert child.returncode == code, child.stderr
        assert child.stdout.strip() == "leaving"
