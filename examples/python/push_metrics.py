#!/usr/bin/env python3
"""Push the energy of training steps and epochs, and GPU power, to a Prometheus Pushgateway.

Written against the Python Zeus's API (``zeus.metric``): only the import lines
name zeuscpp. The metric names and labels are upstream's, so its Grafana
dashboards read them unchanged.

    prometheus-pushgateway --web.listen-address=127.0.0.1:9091 &
    ZEUS_GPU_BACKEND=sim python3 examples/python/push_metrics.py --pushgateway http://127.0.0.1:9091
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushgateway", default="http://127.0.0.1:9091")
    parser.add_argument("--job", default="training")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="steps per epoch")
    args = parser.parse_args()

    gpus = get_gpus()
    simulated = gpus.backend == "sim"
    # Energy of each step, as a histogram; running energy of each epoch, as a
    # counter pushed every 0.1 s; GPU power during each epoch, as a gauge.
    # Buckets (J) sized for short steps; the defaults suit whole iterations.
    step_energy = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=args.pushgateway,
                                  job=f"{args.job}_step", gpu_bucket_range=[5.0, 10.0, 20.0, 50.0, 100.0])
    epoch_energy = EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0], update_period=0.1,
                                           pushgateway_url=args.pushgateway, job=f"{args.job}_epoch")
    gpu_power = PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=args.pushgateway,
                           job=f"{args.job}_power")

    torch.manual_seed(0)
    model = nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        epoch_energy.begin_window(f"epoch_{epoch}")
        gpu_power.begin_window(f"epoch_{epoch}")
        for _ in range(args.steps):
            step_energy.begin_window("step")
            x = torch.randn(32, 16)
            loss = model(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if simulated:
                gpus.simulated(0).execute(0.05 * gpus.simulated(0).throughput)
            step_energy.end_window("step")
        gpu_power.end_window(f"epoch_{epoch}")
        epoch_energy.end_window(f"epoch_{epoch}")
        print(f"epoch {epoch}: pushed {args.steps} step energies, the epoch's energy and its GPU power")


if __name__ == "__main__":
    main()
