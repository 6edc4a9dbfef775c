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


if __name__ == "__main__":
    main()
