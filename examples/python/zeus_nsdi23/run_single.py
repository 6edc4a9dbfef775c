"""Replay one recurring job on the Zeus NSDI '23 traces (upstream's run_single.py, for zeuscpp).

Upstream's driver with zeuscpp's imports; the traces are passed as paths
(pandas is not needed), and ``--num_recurrence`` defaults to 2 |B| |P| through
``Simulator.num_recurrence``. ``--policy python`` swaps in the two policies
below, written the way upstream's interface asks for them.
"""

from __future__ import annotations

import argparse
import os
from pprint import pprint

from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy.interface import BatchSizeOptimizer, PowerLimitOptimizer
from zeuscpp._legacy.policy.optimizer import JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer
from zeuscpp._legacy.simulate import HistoryEntry, Simulator

TRACES = os.environ.get(
    "ZEUS_TRACES",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "data", "zeus-traces"),
)


class ExploreThenExploitBSO(BatchSizeOptimizer):
    """Try every batch size once from the default downwards, then keep the cheapest."""

    def __init__(self) -> None:
        self.todo: dict[Job, list[int]] = {}
        self.costs: dict[Job, dict[int, float]] = {}

    @property
    def name(self) -> str:
        return "ExploreThenExploit"

    def register_job(self, job: Job, batch_sizes: list[int]) -> None:
        below = sorted((b for b in batch_sizes if b <= job.default_bs), reverse=True)
        above = sorted(b for b in batch_sizes if b > job.default_bs)
        self.todo[job] = below + above
        self.costs[job] = {}

    def predict(self, job: Job) -> int:
        if self.todo[job]:
            return self.todo[job][0]
        return min(self.costs[job], key=self.costs[job].get)

    def observe(self, job: Job, batch_size: int, cost: float, converged: bool | None = None) -> None:
        if self.todo[job] and self.todo[job][0] == batch_size:
            self.todo[job].pop(0)
        if converged:
            self.costs[job][batch_size] = min(cost, self.costs[job].get(batch_size, float("inf")))
        elif not self.costs[job]:
            self.costs[job][job.default_bs] = float("inf")


class CheapestProfiledPLO(PowerLimitOptimizer):
    """Upstream's JIT idea: profile on first use, keep the cheapest limit."""

    def __init__(self) -> None:
        self.best: dict[tuple[Job, int], tuple[int, float]] = {}

    @property
    def name(self) -> str:
        return "CheapestProfiled"

    def predict(self, job: Job, batch_size: int) -> int | None:
        best = self.best.get((job, batch_size))
        return None if best is None else best[0]

    def observe(self, job: Job, batch_size: int, power_limit: int, cost: float) -> None:
        best = self.best.get((job, batch_size))
        if best is None or cost < best[1]:
            self.best[(job, batch_size)] = (power_limit, cost)


def parse_args() -> argparse.Namespace:
    """Parse commandline arguments."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="librispeech")
    parser.add_argument("--model", default="deepspeech2")
    parser.add_argument("--optimizer", default="adamw")
    parser.add_argument("--target_metric", type=float, default=40.0)
    parser.add_argument("--max_epochs", type=int, default=16)
    parser.add_argument("--b_0", type=int, default=192)
    parser.add_argument("--gpu", default="v100", choices=["a40", "v100", "p100", "rtx6000"])
    parser.add_argument("--eta_knob", type=float, default=0.5)
    parser.add_argument("--beta_knob", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num_recurrence", type=int, default=None,
                        help="If None, 2*|B|*|P| will be used as in the paper.")
    parser.add_argument("--policy", default="zeus", choices=["zeus", "python"])
    return parser.parse_args()


def run_simulator(job: Job, gpu: str, eta_knob: float, beta_knob: float,
                  num_recurrence: int | None, seed: int = 1, policy: str = "zeus") -> list[HistoryEntry]:
    """Run the simulator on the given job."""
    if policy == "zeus":
        plo = JITPowerLimitOptimizer(verbose=True)
        bso = PruningGTSBatchSizeOptimizer(seed=seed, verbose=True)
    else:
        plo, bso = CheapestProfiledPLO(), ExploreThenExploitBSO()
    simulator = Simulator(os.path.join(TRACES, "summary_train.csv"),
                          os.path.join(TRACES, f"summary_power_{gpu}.csv"), bso, plo, seed=seed,
                          verbose=True)
    if num_recurrence is None:
        num_recurrence = simulator.num_recurrence(job)
    return simulator.simulate_one_job(job, num_recurrence, beta_knob, eta_knob)


def main(args: argparse.Namespace) -> None:
    """Run the main routine."""
    job = Job(args.dataset, args.model, args.optimizer, args.target_metric, args.max_epochs, args.b_0)
    history = run_simulator(job, args.gpu, args.eta_knob, args.beta_knob, args.num_recurrence,
                            args.seed, args.policy)
    pprint(history)


if __name__ == "__main__":
    main(parse_args())
