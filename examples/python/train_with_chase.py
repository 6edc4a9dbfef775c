#!/usr/bin/env python3
"""Train a small PyTorch model while ChasePowerLimitOptimizer follows the grid's carbon intensity.

After the usual just-in-time profiling, the power limit is re-picked every hour
from the forecast carbon intensity: slower and cheaper in dirty hours, fast in
clean ones. On the simulated GPU (ZEUS_GPU_BACKEND=sim) the run replays a day
of 2022 from the shipped GB carbon-intensity file, on a clock that moves
``--minutes-per-step`` per training step; on real GPUs pass ``--location LAT,LON``
(ElectricityMaps, token in ELECTRICITYMAPS_API_TOKEN) and the system clock is used.

    ZEUS_GPU_BACKEND=sim python3 examples/python/train_with_chase.py
"""

from __future__ import annotations

import argparse
import datetime
import os

import torch
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.monitor.carbon import ElectricityMapsClient
from zeuscpp.optimizer.power_limit import ChasePowerLimitOptimizer

GB_CARBON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "grid-signals",
                         "gb-carbon-intensity-2022-hourly.csv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--eta", type=float, default=0.9)
    parser.add_argument("--signal", default=GB_CARBON, help="signal CSV (simulated runs)")
    parser.add_argument("--start", default="2022-03-15T00:00:00+00:00", help="simulated clock's start (UTC)")
    parser.add_argument("--minutes-per-step", type=float, default=10.0, help="simulated clock per step")
    parser.add_argument("--location", default=None, help="LAT,LON for ElectricityMaps (real GPUs)")
    parser.add_argument("--sim-work", type=float, default=0.5, help="simulated GPU work units per step")
    args = parser.parse_args()

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2048, 32, generator=generator)
    y = x @ torch.randn(32, 1, generator=generator)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    gpus = get_gpus()
    simulated = gpus.backend == "sim"
    now = [datetime.datetime.fromisoformat(args.start).timestamp()]
    if args.location:
        lat, lon = (float(v) for v in args.location.split(","))
        signal, clock = ElectricityMapsClient((lat, lon)), None
    else:
        signal, clock = args.signal, (lambda: now[0])
    chase = ChasePowerLimitOptimizer(
        ZeusMonitor(gpu_indices=[0]),
        signal,
        eta=args.eta,
        period_s=3600,
        clock=clock,
        wait_steps=1,
        warmup_steps=2,
        profile_steps=5,
        pl_step=50,
        # Real GPUs: decide and log only (dry run) unless you mean to change the limit.
        dry_run=not simulated and os.environ.get("ZEUSCPP_ALLOW_SETTING_CHANGES") != "1",
    )

    for step in range(args.steps):
        chase.on_step_begin()
        batch = slice((step * 64) % 2048, (step * 64) % 2048 + 64)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x[batch]), y[batch]).backward()
        optimizer.step()
        if simulated:
            gpus.simulated(0).execute(args.sim_work)
        if chase.done:  # profiling took no simulated time; the day starts after it
            now[0] += 60 * args.minutes_per_step

    for m in chase.measurements:
        print(f"profiled {m.power_limit} W: {m.time:.3f} s, {m.energy:.2f} J")
    for d in chase.decisions:
        print(f"{d.period_start:%Y-%m-%d %H:%M} UTC: {d.signal_seen:.0f} g/kWh seen, forecast {d.forecast:.0f}, "
              f"eta_eff {d.eta_eff:.3f} -> {d.power_limit} W")
    print(f"{len(chase.decisions)} decisions, {chase.failed_periods} periods without a signal")


if __name__ == "__main__":
    main()
