#!/usr/bin/env python3
"""The peer for BM_WindowFakeNvml: a Python loop doing what the Python Zeus's
ZeusMonitor does per window (time.time(), one nvmlDeviceGetTotalEnergyConsumption
per GPU at begin and end, dict bookkeeping), through ctypes on the same fake
libnvidia-ml.so.1. pynvml is itself a thin ctypes wrapper, and ZeusMonitor does
more work than this loop, so this is a lower bound for the Python original.

Usage: python_window_peer.py LIBRARY_PATH [GPUS ...]
"""
import ctypes
import sys
import time


def main() -> None:
    lib = ctypes.CDLL(sys.argv[1])
    gpu_counts = [int(x) for x in sys.argv[2:]] or [1, 8]
    lib.fakeNvmlReset()
    if lib.nvmlInit_v2() != 0:
        sys.exit("nvmlInit_v2 failed")
    for n in gpu_counts:
        lib.fakeNvmlSetDeviceCount(ctypes.c_uint(n))
        handles = []
        for i in range(n):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(i), ctypes.byref(h)) != 0:
                sys.exit("nvmlDeviceGetHandleByIndex_v2 failed")
            handles.append(h)
        get_energy = lib.nvmlDeviceGetTotalEnergyConsumption
        energy = ctypes.c_ulonglong()

        def read_all():
            out = {}
            for i, h in enumerate(handles):
                if get_energy(h, ctypes.byref(energy)) != 0:
                    raise RuntimeError("energy read failed")
                out[i] = energy.value / 1000.0
            return out

        windows = {}
        iterations = 20000 if n == 1 else 5000
        start = time.perf_counter()
        for _ in range(iterations):
            windows["step"] = (time.time(), read_all())
            t0, e0 = windows.pop("step")
            t1, e1 = time.time(), read_all()
            _ = (t1 - t0, {i: e1[i] - e0[i] for i in e0})
        per_window_us = (time.perf_counter() - start) / iterations * 1e6
        print(f"python_window_peer/{n}: {per_window_us:.2f} us per begin+end window")
    lib.nvmlShutdown()


if __name__ == "__main__":
    main()
