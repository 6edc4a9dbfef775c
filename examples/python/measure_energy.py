#!/usr/bin/env python3
"""Measure the time and energy of code regions with ZeusMonitor, and power over time with PowerMonitor.

    ZEUS_GPU_BACKEND=sim python3 examples/python/measure_energy.py
"""

from __future__ import annotations

import time

from zeuscpp.device import get_gpus
from zeuscpp.monitor import PowerMonitor, ZeusMonitor


def busy_work(seconds: float) -> None:
    gpus = get_gpus()
    if gpus.backend == "sim":
        gpus.simulated(0).execute(seconds * gpus.simulated(0).throughput)
    else:
        time.sleep(seconds)


def main() -> None:
    monitor = ZeusMonitor(sync_execution_with=None)
    power = PowerMonitor(update_period=0.02)

    start = time.time()
    monitor.begin_window("whole")
    for i in range(3):
        monitor.begin_window("part")  # windows nest and overlap freely
        busy_work(0.1)
        part = monitor.end_window("part")
        print(f"part {i}: {part.time:.3f} s, {part.total_energy:.2f} J")
    whole = monitor.end_window("whole")
    end = time.time()

    print(f"whole: {whole.time:.3f} s, GPU energy {whole.gpu_energy}")
    print(f"power monitor over the same span: {power.get_energy(start, end)} J")
    print(f"latest power: {power.get_power()} W")
    power.stop()


if __name__ == "__main__":
    main()
