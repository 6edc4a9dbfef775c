#!/usr/bin/env python3
"""Train a small PyTorch model while GlobalPowerLimitOptimizer finds the best GPU power limit.

Written against the Python Zeus's API: only the import lines name zeuscpp.
Runs anywhere: with ZEUS_GPU_BACKEND=sim each training step also runs a slice
of work on the simulated GPU, whose physical model makes lower power limits
slower but cheaper, so the profile shows the real trade-off.

    ZEUS_GPU_BACKEND=sim python3 examples/python/train_with_power_limit.py
"""

from __future__ import annotations

import argparse
import os

import torch
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import GlobalPowerLimitOptimizer, MaxSlowdownConstraint, ZeusCost


def synthetic_regression(samples: int = 2048, features: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples, features, generator=generator)
    w = torch.randn(features, 1, generator=generator)
    y = x @ w + 0.1 * torch.randn(samples, 1, generator=generator)
    return x, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--selector", choices=["zeus-cost", "max-slowdown"], default="zeus-cost")
    parser.add_argument("--sim-work", type=float, default=0.5, help="simulated GPU work units per step")
    parser.add_argument("--profile-path", default=None)
    args = parser.parse_args()

    x, y = synthetic_regression()
    model = nn.Sequential(nn.Linear(x.shape[1], 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()

    gpus = get_gpus()
    simulated = gpus.backend == "sim"
    monitor = ZeusMonitor(gpu_indices=[0])
    selector = ZeusCost(eta_knob=0.5) if args.selector == "zeus-cost" else MaxSlowdownConstraint(factor=1.1)
    # Real GPUs: measure only (dry run) unless you mean to change the limit.
    plo = GlobalPowerLimitOptimizer(
        monitor,
        selector,
        wait_steps=1,
        warmup_steps=2,
        profile_steps=5,
        pl_step=50,
        profile_path=args.profile_path,
        dry_run=not simulated and os.environ.get("ZEUSCPP_ALLOW_SETTING_CHANGES") != "1",
    )

    steps_per_epoch = len(x) // args.batch_size
    for epoch in range(args.epochs):
        monitor.begin_window("epoch")
        total = 0.0
        for step in range(steps_per_epoch):
            plo.on_step_begin()
            batch = slice(step * args.batch_size, (step + 1) * args.batch_size)
            optimizer.zero_grad()
            loss = loss_fn(model(x[batch]), y[batch])
            loss.backward()
            optimizer.step()
            if simulated:
                gpus.simulated(0).execute(args.sim_work)
            total += loss.item()
            plo.on_step_end()
        plo.on_epoch_end()
        m = monitor.end_window("epoch")
        print(
            f"epoch {epoch}: loss {total / steps_per_epoch:.4f}, {m.time:.2f} s, {m.total_energy:.1f} J, "
            f"power limit {gpus.get_power_management_limit(0) / 1000:.0f} W"
        )

    for measurement in plo.measurements:
        print(f"  profiled {measurement.power_limit} W: {measurement.time:.3f} s, {measurement.energy:.2f} J")
    print(f"chosen power limit: {plo.optimal_power_limit} W ({plo.selector_name})")
    if plo.saving is not None:
        s = plo.saving
        print(f"against the maximum: {-100 * s['energy_saving_fraction']:+.1f}% energy, "
              f"{100 * s['time_change_fraction']:+.1f}% time")


if __name__ == "__main__":
    main()
