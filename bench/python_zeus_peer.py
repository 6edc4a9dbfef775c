#!/usr/bin/env python3
"""The Python Zeus's own ZeusMonitor, one begin_window + end_window, on the
fake libnvidia-ml.so.1: the peer for bench/python_bench.py's window.

The Python Zeus is not part of this project and is not installed by it: point
ZEUS_UPSTREAM_SRC at a checkout of github.com/ml-energy/zeus (the folder that
holds `zeus/`). Its Python dependencies come from Debian (`apt-get install
python3-numpy python3-pandas python3-sklearn python3-pydantic python3-httpx
python3-rich python3-dateutil`); `pynvml` is bench/upstream_peer/pynvml.py.

Usage: ZEUS_UPSTREAM_SRC=DIR python_zeus_peer.py LIBRARY_PATH [GPUS ...]
Timing as in python_bench.py: 1,000 warm-up windows, best of 5 runs.

Then its PowerMonitor: 8 GPUs every 10 ms for 5 s while Python sleeps, one
domain (device_instant) and three (device_instant, device_average,
memory_average), as python_bench.py samples ours. The Python Zeus polls each
domain in a process of its own, so its CPU share is this process's CPU time
plus that of its polling processes (their threads' schedstat run time),
counted after they signalled ready (their start-up is left out).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import time


def main() -> None:
    upstream = os.environ.get("ZEUS_UPSTREAM_SRC")
    if not upstream or not os.path.isdir(os.path.join(upstream, "zeus")):
        sys.exit("python_zeus_peer: set ZEUS_UPSTREAM_SRC to a checkout of the Python Zeus (the folder holding zeus/)")
    library = sys.argv[1]
    gpu_counts = [int(x) for x in sys.argv[2:]] or [1, 8]
    os.environ["ZEUS_PEER_NVML"] = library
    sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "upstream_peer"), upstream]
    fake = ctypes.CDLL(library)
    fake.fakeNvmlReset()
    for n in gpu_counts:
        fake.fakeNvmlSetDeviceCount(ctypes.c_uint(n))
        print(f"python_zeus_peer/{n}: {window_us(n, 20000 if n == 1 else 5000):.2f} us per begin+end window")
    os.environ["ZEUS_PEER_GPUS"] = "8"
    fake.fakeNvmlSetDeviceCount(ctypes.c_uint(8))
    for domains in (["device_instant"], ["device_instant", "device_average", "memory_average"]):
        share = power_monitor_share(domains, 5.0)
        print(f"python_zeus_peer power monitor, 8 GPUs every 10 ms for 5 s, {len(domains)} domain(s): "
              f"{share:.2f}% of one core")


def window_us(gpus: int, iterations: int) -> float:
    # The device list is built once per process upstream; a fresh process per
    # GPU count would also do, but clearing its cache is enough.
    import zeus.device.gpu as upstream_gpu
    from zeus.monitor import ZeusMonitor

    upstream_gpu._gpus = None
    logging.getLogger("zeus").setLevel(logging.WARNING)
    monitor = ZeusMonitor(gpu_indices=list(range(gpus)), cpu_indices=[], approx_instant_energy=False)
    assert len(monitor.gpu_indices) == gpus
    begin, end = monitor.begin_window, monitor.end_window
    for _ in range(1000):
        begin("step", sync_execution=False)
        end("step", sync_execution=False)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(iterations):
            begin("step", sync_execution=False)
            end("step", sync_execution=False)
        best = min(best, (time.perf_counter() - start) / iterations)
    return best * 1e6


def run_seconds(pid: int) -> float:
    """CPU time of every thread of process `pid` so far (schedstat: ns on a CPU)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


def power_monitor_share(domains: list[str], seconds: float) -> float:
    import zeus.device.gpu as upstream_gpu
    from zeus.monitor.power import PowerMonitor

    upstream_gpu._gpus = None
    monitor = PowerMonitor(gpu_indices=list(range(8)), update_period=0.01, power_domains=domains)
    assert len(monitor.processes) == len(domains)
    pids = [p.pid for p in monitor.processes.values()]
    time.sleep(0.2)
    cpu0 = time.process_time() + sum(run_seconds(p) for p in pids)
    wall0 = time.perf_counter()
    time.sleep(seconds)
    cpu1 = time.process_time() + sum(run_seconds(p) for p in pids)
    wall1 = time.perf_counter()
    monitor.stop()
    return 100.0 * (cpu1 - cpu0) / (wall1 - wall0)


if __name__ == "__main__":
    main()
