#!/usr/bin/env python3
"""Data-parallel training with GlobalPowerLimitOptimizer: every rank profiles, the ranks agree, all apply one limit.

Written against the Python Zeus's API: only the import lines name zeuscpp.
Each rank drives the GPU of its LOCAL_RANK. When torch.distributed is
initialized, the optimizer all-reduces each profiled measurement (energy
summed over ranks, time of the slowest rank), so every rank chooses the same
power limit. Launch it with torchrun, or run it plainly and it starts
``--world-size`` ranks itself (gloo on loopback; torchrun from Debian's
torch 1.13 does not start on Python 3.11):

    torchrun --nproc_per_node=2 examples/python/train_data_parallel.py
    ZEUS_GPU_BACKEND=sim ZEUS_SIM_GPUS=2 python3 examples/python/train_data_parallel.py --world-size 2
"""

from __future__ import annotations

import argparse
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import GlobalPowerLimitOptimizer


def train(rank: int, world_size: int, args: argparse.Namespace) -> None:
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)

    gpus = get_gpus()
    simulated = gpus.backend == "sim"
    monitor = ZeusMonitor(gpu_indices=[local_rank])
    plo = GlobalPowerLimitOptimizer(
        monitor,
        wait_steps=1,
        warmup_steps=1,
        profile_steps=3,
        pl_step=100,
        # Real GPUs: measure only (dry run) unless you mean to change the limit.
        dry_run=not simulated and os.environ.get("ZEUSCPP_ALLOW_SETTING_CHANGES") != "1",
    )

    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(rank)  # each rank its own shard
    x = torch.randn(512, 16, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    batch = 32
    for epoch in range(args.epochs):
        for step in range(len(x) // batch):
            plo.on_step_begin()
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x[step * batch:(step + 1) * batch]), y[step * batch:(step + 1) * batch])
            loss.backward()  # DDP all-reduces the gradients
            optimizer.step()
            if simulated:
                gpus.simulated(local_rank).execute(args.sim_work)
            plo.on_step_end()
        plo.on_epoch_end()
        print(f"rank {rank} epoch {epoch}: loss {loss.item():.4f}", flush=True)

    print(f"rank {rank}: chosen power limit {plo.optimal_power_limit} W ({plo.selector_name}), "
          f"GPU {local_rank} now at {gpus.get_power_management_limit(local_rank) / 1000:.0f} W", flush=True)
    dist.destroy_process_group()


def spawned(rank: int, world_size: int, args: argparse.Namespace) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    train(rank, world_size, args)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world-size", type=int, default=2, help="ranks to start when not under torchrun")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--sim-work", type=float, default=0.3, help="simulated GPU work units per step")
    args = parser.parse_args()

    if "RANK" in os.environ:  # started by torchrun
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    mp.spawn(spawned, args=(args.world_size, args), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
