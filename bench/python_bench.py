#!/usr/bin/env python3
"""zeuscpp from Python: per-window overhead, import time, power-monitor CPU share.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py build/tests/fakes/nvml/libnvidia-ml.so.1

- window: one begin_window + end_window (the Measurement included) on the fake
  libnvidia-ml.so.1 with 1 and 8 GPUs; compare with bench/python_window_peer.py
  (the same NVML calls from a pure-Python ctypes loop) in the same run:
  bash bench/compare_window_overhead.sh does both.
- import: `import zeuscpp` (and the monitor + optimizer modules) in a fresh
  interpreter, best of 7.
- power monitor: 8 fake GPUs sampled every 10 ms for 5 s while Python sleeps,
  one domain and three; the process's CPU time as a share of one core.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time


def fake(library: str, gpus: int) -> ctypes.CDLL:
    lib = ctypes.CDLL(library)
    lib.fakeNvmlReset()
    assert lib.fakeNvmlSetDeviceCount(ctypes.c_uint(gpus)) == 0
    return lib


def window_overhead(library: str, gpus: int, iterations: int) -> float:
    from zeuscpp._core import device
    from zeuscpp.monitor import ZeusMonitor

    device._reset_devices()
    fake(library, gpus)
    monitor = ZeusMonitor(sync_execution_with=None)
    assert len(monitor.gpu_indices) == gpus
    begin, end = monitor.begin_window, monitor.end_window
    for _ in range(1000):
        begin("step")
        end("step")
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(iterations):
            begin("step")
            end("step")
        best = min(best, (time.perf_counter() - start) / iterations)
    del monitor
    return best * 1e6


def import_ms(statement: str) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print((time.perf_counter() - t) * 1e3)"
    runs = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                 env=os.environ).stdout) for _ in range(7)]
    return min(runs)


def power_monitor_share(library: str, gpus: int, seconds: float,
                        domains: list[str] | None = None) -> tuple[float, int]:
    from zeuscpp._core import device
    from zeuscpp.monitor import PowerMonitor

    device._reset_devices()
    fake(library, gpus)
    monitor = PowerMonitor(update_period=0.01, power_domains=domains)
    time.sleep(0.2)  # past the first rounds (each GPU's power scopes resolved)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    cpu1, wall1 = time.process_time(), time.perf_counter()
    rounds = lib_calls(library) // gpus
    monitor.stop()
    return 100.0 * (cpu1 - cpu0) / (wall1 - wall0), rounds


def lib_calls(library: str) -> int:
    lib = ctypes.CDLL(library)
    lib.fakeNvmlCallCount.restype = ctypes.c_uint
    return lib.fakeNvmlCallCount(b"nvmlDeviceGetFieldValues")


def main() -> None:
    library = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/tests/fakes/nvml/libnvidia-ml.so.1")
    os.environ["ZEUS_GPU_BACKEND"] = "nvml"
    os.environ["ZEUS_NVML_LIBRARY"] = library
    os.environ.setdefault("ZEUS_POWERCAP_ROOT", "/nonexistent")
    for gpus, iterations in ((1, 20000), (8, 5000)):
        print(f"zeuscpp_window/{gpus}: {window_overhead(library, gpus, iterations):.2f} us per begin+end window")
    print(f"import zeuscpp: {import_ms('import zeuscpp'):.1f} ms")
    print(f"import zeuscpp.monitor + zeuscpp.optimizer.power_limit: "
          f"{import_ms('import zeuscpp.monitor, zeuscpp.optimizer.power_limit'):.1f} ms")
    share, rounds = power_monitor_share(library, 8, 5.0)
    print(f"power monitor, 8 GPUs every 10 ms for 5 s: {share:.2f}% of one core ({rounds} reads per GPU)")
    share, rounds = power_monitor_share(library, 8, 5.0, ["device_instant", "device_average", "memory_average"])
    print(f"power monitor, 8 GPUs every 10 ms for 5 s, 3 domains: {share:.2f}% of one core "
          f"({rounds} field-value calls per GPU)")


if __name__ == "__main__":
    main()
