"""Replay every recurring-job group of the Alibaba trace (upstream's run_alibaba.py, for zeuscpp).

Upstream's driver with zeuscpp's imports. The group trace is not in this
repository: pass upstream's ``trace/alibaba_groups.csv.xz`` (from the
ml-energy/zeus repository, examples/research_reproducibility/zeus_nsdi23) with
``--groups``; docs/extending.md explains how the paper's figure follows from
the histories. Groups are read with ``read_alibaba_groups`` (no pandas).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
from functools import lru_cache
from pprint import pprint

from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy import JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer
from zeuscpp._legacy.simulate import AlibabaGroup, HistoryEntry, Simulator, group_seed, read_alibaba_groups

TRACES = os.environ.get(
    "ZEUS_TRACES",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "data", "zeus-traces"),
)


def parse_args() -> argparse.Namespace:
    """Parse commandline arguments."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", default="v100", choices=["a40", "v100", "p100", "rtx6000"])
    parser.add_argument("--eta_knob", type=float, default=0.5)
    parser.add_argument("--beta_knob", type=float, default=2.0)
    parser.add_argument("--groups", default="trace/alibaba_groups.csv.xz")
    parser.add_argument("--processes", type=int, default=mp.cpu_count())
    return parser.parse_args()


def run_simulator(groups: str, gpu: str, eta_knob: float, beta_knob: float,
                  processes: int) -> list[tuple[str, list[HistoryEntry]]]:
    """Run the simulator on every group."""
    alibaba = read_alibaba_groups(groups)
    print("Read in the Alibaba trace.")
    print(f"Number of groups: {len(alibaba)}")
    with mp.Pool(processes) as p:
        return p.starmap(simulate_group, ((group, gpu, eta_knob, beta_knob) for group in alibaba))


def simulate_group(group: AlibabaGroup, gpu: str, eta_knob: float,
                   beta_knob: float) -> tuple[str, list[HistoryEntry]]:
    """Perform trace-driven simulation on one Alibaba recurring job group."""
    job = get_job_with_defaults(gpu, group.dataset)
    seed = group_seed(group.group)  # zlib.adler32 of the group id, as upstream
    bso = PruningGTSBatchSizeOptimizer(seed=seed, concurrency=True, verbose=False)
    plo = JITPowerLimitOptimizer(verbose=False)
    simulator = Simulator(train_trace(), power_trace(gpu), bso, plo, seed=seed, verbose=False)
    history = simulator.simulate_one_alibaba_group(job, group, beta_knob=beta_knob, eta_knob=eta_knob)
    return (group.dataset, history)


def train_trace() -> str:
    return os.path.join(TRACES, "summary_train.csv")


def power_trace(gpu: str) -> str:
    return os.path.join(TRACES, f"summary_power_{gpu}.csv")


@lru_cache(maxsize=4)
def largest_batch_sizes(gpu: str) -> dict[str, int]:
    """The largest batch size of each dataset in the GPU's power trace."""
    out: dict[str, int] = {}
    with open(power_trace(gpu), encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        di, bi = header.index("dataset"), header.index("batch_size")
        for line in f:
            cells = line.strip().split(",")
            out[cells[di]] = max(out.get(cells[di], 0), int(cells[bi]))
    return out


def get_job_with_defaults(gpu: str, dataset: str) -> Job:
    """Instantiate a Job instance with defaults for the given dataset (upstream's table)."""
    bmax = largest_batch_sizes(gpu).get(dataset)
    if bmax is None:
        raise NotImplementedError(f"Unknown dataset {dataset}.")
    if dataset == "cifar100":
        return Job("cifar100", "shufflenetv2", "adadelta", 0.6, 100, min(1024, bmax), 0.1)
    if dataset == "imagenet":
        return Job("imagenet", "resnet50", "adadelta", 0.65, 100, min(256, bmax))
    if dataset == "squad":
        return Job("squad", "bert_base_uncased", "adamw", 84.0, 6, min(32, bmax))
    if dataset == "librispeech":
        return Job("librispeech", "deepspeech2", "adamw", 40.0, 16, min(256, bmax))
    if dataset == "movielens-1m":
        return Job("movielens-1m", "ncf", "adam", 0.41, 100, min(1024, bmax))
    if dataset == "sentiment140":
        return Job("sentiment140", "bert_base_uncased", "adamw", 0.84, 10, min(128, bmax), 4.00e-7)
    raise NotImplementedError(f"Unknown dataset {dataset}.")


if __name__ == "__main__":
    args = parse_args()
    history = run_simulator(args.groups, args.gpu, args.eta_knob, args.beta_knob, args.processes)
    pprint(history[:20])
