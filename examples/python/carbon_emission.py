#!/usr/bin/env python3
"""Report the carbon emissions of each training epoch with CarbonEmissionMonitor.

Written against the Python Zeus's API (``zeus.monitor.carbon``): only the
import lines name zeuscpp. Carbon intensity comes from ElectricityMaps when
ELECTRICITYMAPS_API_TOKEN is set, from a CSV file of hourly intensities
(``time,value`` with UTC times, gCO2eq/kWh) with ``--intensity-csv``, and
otherwise from a constant.

    ZEUS_GPU_BACKEND=sim python3 examples/python/carbon_emission.py --intensity-csv gb.csv
"""

from __future__ import annotations

import argparse
import os

import torch
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor.carbon import (
    CarbonEmissionMonitor,
    ConstantCarbonIntensity,
    CsvCarbonIntensity,
    ElectricityMapsClient,
)


def intensity_provider(csv_path: str | None, location: tuple[float, float], constant: float):
    if csv_path:
        return CsvCarbonIntensity(csv_path)
    if os.environ.get("ELECTRICITYMAPS_API_TOKEN"):
        return ElectricityMapsClient(location=location)
    print(f"no ELECTRICITYMAPS_API_TOKEN and no --intensity-csv: assuming {constant} gCO2eq/kWh")
    return ConstantCarbonIntensity(constant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intensity-csv", default=None)
    parser.add_argument("--latitude", type=float, default=51.5, help="for ElectricityMaps (default: London)")
    parser.add_argument("--longitude", type=float, default=-0.13)
    parser.add_argument("--constant", type=float, default=400.0, help="gCO2eq/kWh when no source is given")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    gpus = get_gpus()
    monitor = CarbonEmissionMonitor(intensity_provider(args.intensity_csv, (args.latitude, args.longitude), args.constant),
                                    gpu_indices=[0], cpu_indices=[])
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters())
    total_grams = 0.0
    for epoch in range(args.epochs):
        monitor.begin_window("epoch")
        for _ in range(10):
            loss = model(torch.randn(64, 32)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if gpus.backend == "sim":
                gpus.simulated(0).execute(0.02 * gpus.simulated(0).throughput)
        m = monitor.end_window("epoch")
        if m.gpu_carbon_emission is None:
            print(f"epoch {epoch}: {sum(m.gpu_energy.values()):.1f} J, no emissions: {m.error}")
            continue
        grams = sum(m.gpu_carbon_emission.values())
        total_grams += grams
        print(f"epoch {epoch}: {m.time:.2f} s, {sum(m.gpu_energy.values()):.1f} J, {grams:.6f} gCO2eq")
    print(f"total: {total_grams:.6f} gCO2eq")


if __name__ == "__main__":
    main()
