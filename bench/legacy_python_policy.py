"""Times the paper matrix (4 GPUs x 6 workloads x 10 seeds) through zeuscpp._legacy
with Python policies (docs/benchmarks.md). Run with PYTHONPATH=build/python."""

from __future__ import annotations

import os
import sys
import time

from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy import (
    BatchSizeOptimizer,
    JITPowerLimitOptimizer,
    PowerLimitOptimizer,
    PruningGTSBatchSizeOptimizer,
)
from zeuscpp._legacy.simulate import Simulator

TRACES = os.path.join(os.path.dirname(__file__), "..", "data", "zeus-traces")
WORKLOADS = [  # upstream's run_alibaba.get_job_with_defaults, b0 before capping
    ("cifar100", "shufflenetv2", "adadelta", 0.6, 100, 1024),
    ("imagenet", "resnet50", "adadelta", 0.65, 100, 256),
    ("squad", "bert_base_uncased", "adamw", 84.0, 6, 32),
    ("librispeech", "deepspeech2", "adamw", 40.0, 16, 192),
    ("movielens-1m", "ncf", "adam", 0.41, 100, 1024),
    ("sentiment140", "bert_base_uncased", "adamw", 0.84, 10, 128),
]


class TrivialBSO(BatchSizeOptimizer):
    """Always the default batch size: the cheapest possible Python policy."""

    name = "Trivial"

    def register_job(self, job, batch_sizes):
        pass

    def predict(self, job):
        return job.default_bs

    def observe(self, job, batch_size, cost, converged=None):
        pass


class Delegating(BatchSizeOptimizer):
    """Zeus's search behind a Python policy: Zeus's decisions, every call through Python."""

    name = "Delegating"

    def __init__(self, seed):
        self.inner = PruningGTSBatchSizeOptimizer(seed=seed)

    def register_job(self, job, batch_sizes):
        self.inner.register_job(job, batch_sizes)

    def predict(self, job):
        return self.inner.predict(job)

    def observe(self, job, batch_size, cost, converged=None):
        self.inner.observe(job, batch_size, cost, converged)


class JITInPython(PowerLimitOptimizer):
    name = "JITInPython"

    def __init__(self):
        self.best = {}

    def predict(self, job, batch_size):
        best = self.best.get(batch_size)
        return None if best is None else best[0]

    def observe(self, job, batch_size, power_limit, cost):
        best = self.best.get(batch_size)
        if best is None or cost < best[1]:
            self.best[batch_size] = (power_limit, cost)


def largest(gpu):
    out = {}
    with open(os.path.join(TRACES, f"summary_power_{gpu}.csv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            cells = line.split(",")
            out[cells[0]] = max(out.get(cells[0], 0), int(cells[2]))
    return out


def matrix(make_policies):
    runs = 0
    start = time.perf_counter()
    for gpu in ("v100", "a40", "p100", "rtx6000"):
        bmax = largest(gpu)
        for d, n, o, t, e, b0 in WORKLOADS:
            job = Job(d, n, o, t, e, min(b0, bmax[d]))
            for seed in range(1, 11):
                bso, plo = make_policies(seed)
                sim = Simulator(os.path.join(TRACES, "summary_train.csv"),
                                os.path.join(TRACES, f"summary_power_{gpu}.csv"), bso, plo,
                                seed=seed, verbose=False)
                runs += len(sim.simulate_one_job(job, sim.num_recurrence(job), 2.0, 0.5))
    return time.perf_counter() - start, runs


if __name__ == "__main__":
    cases = {
        "trivial Python BSO + Python JIT PLO": lambda s: (TrivialBSO(), JITInPython()),
        "Zeus behind a Python BSO + Python JIT PLO": lambda s: (Delegating(s), JITInPython()),
        "built-in Zeus (C++ only)": lambda s: (PruningGTSBatchSizeOptimizer(seed=s), JITPowerLimitOptimizer()),
    }
    for name, make in cases.items():
        seconds, runs = matrix(make)
        print(f"{name}: {seconds:.2f} s, {runs} runs", file=sys.stdout)
