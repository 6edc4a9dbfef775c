"""One rank of the two-process torch.distributed (gloo) test (see test_distributed.py).

Trains a DDP model on its shard with a simulated GPU; rank 1 gives its GPU
more work per step, so the ranks' times differ. Records every value the
optimizer hands to the reducer and what came back, and writes them as JSON.
"""

from __future__ import annotations

import json
import sys

import torch
import torch.distributed as dist
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import GlobalPowerLimitOptimizer
from zeuscpp.utils.framework import TorchDistributedReducer


def main() -> None:
    rank, world, init_file, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)

    calls = []
    for name in ("all_reduce_sum", "all_reduce_max"):
        original = getattr(TorchDistributedReducer, name)

        def recording(self, local, _original=original, _name=name):
            result = _original(self, local)
            calls.append([_name, local, result])
            return result

        setattr(TorchDistributedReducer, name, recording)

    torch.manual_seed(rank)
    x = torch.randn(256, 8)
    y = x.sum(dim=1, keepdim=True)
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    sim = get_gpus().simulated(0)
    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(monitor, wait_steps=0, warmup_steps=1, profile_steps=3, pl_step=100)

    losses = []
    for _ in range(2):
        for step in range(16):
            plo.on_step_begin()
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x[step * 16:(step + 1) * 16]), y[step * 16:(step + 1) * 16])
            loss.backward()  # gradients are all-reduced by DDP over gloo
            opt.step()
            sim.execute(0.2 * (1 + 2 * rank))
            losses.append(loss.item())
        plo.on_epoch_end()

    result = {
        "reducer": type(plo.reducer).__name__,
        "selector": plo.selector_name,
        "calls": calls,
        "measurements": [[m.power_limit, m.energy, m.time] for m in plo.measurements],
        "optimal": plo.optimal_power_limit,
        "limit_now": get_gpus().get_power_management_limit(0),
        "loss_first": losses[0],
        "loss_last": losses[-1],
    }
    del plo
    with open(out, "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
