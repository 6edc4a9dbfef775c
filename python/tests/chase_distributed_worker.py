"""One rank of the two-process Chase test over torch.distributed (gloo), see test_chase.py.

Rank 1's clock runs 2 s behind rank 0's and its signal raises if read: the
ranks must still apply rank 0's decisions at the same steps. Writes the
decisions, the GPU limit after each step and every reducer call as JSON.
"""

from __future__ import annotations

import json
import sys

import torch.distributed as dist

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import ChasePowerLimitOptimizer
from zeuscpp.utils.framework import TorchDistributedReducer

T0 = 1_704_067_200
HOUR = 3600


def main() -> None:
    rank, world, init_file, out, profile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    calls = []
    for name in ("all_reduce_sum", "all_reduce_max"):
        original = getattr(TorchDistributedReducer, name)

        def recording(self, local, _original=original, _name=name):
            result = _original(self, local)
            calls.append([_name, local, result])
            return result

        setattr(TorchDistributedReducer, name, recording)

    reads = []

    def signal(start: int, period: int) -> float:
        reads.append(start)
        if rank != 0:
            raise RuntimeError("only rank 0 reads the signal")
        return 100.0 if (start // HOUR) % 2 == 0 else 900.0

    skew = -2.0 if rank == 1 else 0.0
    now = [T0 + 10 + skew]
    # The same saved profile on both ranks (measured timings would make the
    # choices depend on the machine's load): with world size 2, eta_eff 0.5
    # (after a low hour) picks 200 W and 0.9 (after a high one) 100 W.
    chase = ChasePowerLimitOptimizer(ZeusMonitor(gpu_indices=[0]), signal, eta=0.9, period_s=HOUR, kind="carbon",
                                     signal_max=900.0, clock=lambda: now[0], pl_step=100, profile_path=profile)
    assert chase.done
    limits = []
    for t in (T0 + 60, T0 + HOUR + 1, T0 + HOUR + 30, T0 + 2 * HOUR + 1, T0 + 3 * HOUR):
        now[0] = t + skew
        chase.on_step_begin()
        limits.append(get_gpus().get_power_management_limit(0))
    result = {
        "reducer": type(chase.reducer).__name__,
        "world_size": chase.world_size,
        "decisions": [[d.period_start_utc, d.signal_seen, d.forecast, d.eta_eff, d.power_limit]
                      for d in chase.decisions],
        "failed": chase.failed_periods,
        "limits": limits,
        "reads": len(reads),
        "calls": calls,
    }
    del chase
    with open(out, "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
