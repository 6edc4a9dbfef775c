#!/usr/bin/env python3
"""What zeuscpp.profile.measure() adds to a trial beyond its cooldown and the workload.

    ZEUS_GPU_BACKEND=sim PYTHONPATH=build/python /usr/bin/python3 bench/python_profile_overhead.py

On the simulated GPU, the workload is a 2 ms busy loop; each run times the
whole measure() call and the workload's own calls, and the overhead is
wall time - the cooldown actually slept - the workload's time, as a share of
the trial's duration (cooldown + workload). Best and median of 5 runs.
"""

from __future__ import annotations

import statistics
import time

import zeuscpp.profile as profile
from zeuscpp.monitor import ZeusMonitor

ITERATION_S = 0.002


def main() -> None:
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    busy = [0.0]

    def workload() -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < ITERATION_S:
            pass
        busy[0] += time.perf_counter() - start

    slept = [0.0]
    real_sleep = time.sleep

    def timed_sleep(seconds: float) -> None:
        start = time.perf_counter()
        real_sleep(seconds)
        slept[0] += time.perf_counter() - start

    profile.time.sleep = timed_sleep  # the module's sleep, timed (the same function underneath)
    shares = []
    for _ in range(5):
        busy[0] = slept[0] = 0.0
        start = time.perf_counter()
        result = profile.measure(workload, monitor, measurement_duration=1.0, cooldown_duration=0.5)
        wall = time.perf_counter() - start
        overhead = wall - slept[0] - busy[0]
        shares.append(overhead / (slept[0] + busy[0]))
        print(f"wall {wall:.4f} s  cooldown {slept[0]:.4f} s  workload {busy[0]:.4f} s  "
              f"({result.iterations} measured iterations)  overhead {overhead * 1e3:.2f} ms = {shares[-1]:.3%}")
    print(f"overhead share: best {min(shares):.3%}, median {statistics.median(shares):.3%}")


if __name__ == "__main__":
    main()
