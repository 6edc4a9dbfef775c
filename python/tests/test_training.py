"""A real PyTorch training loop (CPU, synthetic data) measured by ZeusMonitor and tuned by
GlobalPowerLimitOptimizer, on the simulated GPU and on the fake NVML library."""

from __future__ import annotations

import gc

import pytest
import torch
from torch import nn

from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer, ZeusCost


def make_training():
    torch.manual_seed(0)
    x = torch.randn(1024, 16)
    y = x @ torch.randn(16, 1) + 0.05 * torch.randn(1024, 1)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    return x, y, model, opt


def train(monitor, plo, epochs: int, batch: int, after_step) -> tuple[list[float], list]:
    x, y, model, opt = make_training()
    losses, measurements = [], []
    steps = len(x) // batch
    for _ in range(epochs):
        monitor.begin_window("epoch")
        plo.on_epoch_begin()
        total = 0.0
        for step in range(steps):
            plo.on_step_begin()
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x[step * batch:(step + 1) * batch]), y[step * batch:(step + 1) * batch])
            loss.backward()
            opt.step()
            after_step()
            total += loss.item()
            plo.on_step_end()
        plo.on_epoch_end()
        measurements.append(monitor.end_window("epoch"))
        losses.append(total / steps)
    return losses, measurements


def zeus_cost_choice(measurements, eta: float) -> int:
    max_power = max(m.power_limit for m in measurements)
    return min(measurements, key=lambda m: (eta * m.energy + (1 - eta) * max_power * m.time, -m.power_limit)).power_limit


def test_training_on_the_simulated_gpu():
    gpus = get_gpus()
    assert gpus.backend == "sim"
    sim = gpus.simulated(0)
    original = gpus.get_power_management_limit(0)
    monitor = ZeusMonitor(gpu_indices=[0])  # default sync_execution_with="torch": CPU-only torch
    plo = GlobalPowerLimitOptimizer(monitor, ZeusCost(0.5), wait_steps=1, warmup_steps=1, profile_steps=4, pl_step=50)
    limits_during = []

    def gpu_work():
        sim.execute(0.3)  # 3 ms at full clock; slower under lower limits
        limits_during.append(gpus.get_power_management_limit(0))

    energy_before = sim.true_energy()
    losses, epochs = train(monitor, plo, epochs=4, batch=32, after_step=gpu_work)
    assert losses[-1] < losses[0] * 0.5  # it really trained
    assert plo.done
    assert [m.power_limit for m in plo.measurements] == [300, 250, 200, 150, 100]
    # Lower limits are slower but draw less: the model's trade-off shows in the profile.
    times = [m.time for m in plo.measurements]
    assert times[-1] > times[0]
    assert plo.optimal_power_limit == zeus_cost_choice(plo.measurements, 0.5)
    assert gpus.get_power_management_limit(0) == plo.optimal_power_limit * 1000
    assert sorted(set(limits_during), reverse=True)[:2] == [300000, 250000]
    total = sum(m.gpu_energy[0] for m in epochs)
    assert total == pytest.approx(sim.true_energy() - energy_before, rel=0.05)
    del plo
    gc.collect()
    assert gpus.get_power_management_limit(0) == original


def test_training_on_the_fake_nvml_library(fake_nvml):
    fake_nvml.set_device_count(1)
    monitor = ZeusMonitor()
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=1, profile_steps=3, pl_step=100)

    def gpu_work():
        # A scripted GPU: energy per step grows with the limit above 300 W and
        # with time below it (slower steps), lowest at 300 W.
        watts = fake_nvml.power_limit_mw(0) // 1000
        fake_nvml.advance_energy_mj(0, 1000 * watts // 100 + (300 - watts) ** 2 if watts < 300 else 1000 * watts // 100)

    losses, epochs = train(monitor, plo, epochs=3, batch=32, after_step=gpu_work)
    assert losses[-1] < losses[0]
    assert plo.done
    assert plo.optimal_power_limit == min(plo.measurements, key=lambda m: m.energy).power_limit == 300
    assert fake_nvml.power_limit_mw(0) == 300000
    assert all(m.gpu_energy[0] > 0 for m in epochs)
    del plo
    gc.collect()
    assert fake_nvml.power_limit_mw(0) == 700000
    assert not fake_nvml.persistence(0)
