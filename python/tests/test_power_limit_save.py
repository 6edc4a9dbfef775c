"""A power-limit profile that cannot be saved is said out loud, for root too.

Root passes every permission check up front, so the save at the end of
profiling is where its failure shows: a RuntimeWarning (once) besides the log
line, since the next run would silently profile again.
"""

from __future__ import annotations

import json
import warnings

import pytest

from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer


def run_steps(plo, fake, steps: int) -> None:
    for _ in range(steps):
        plo.on_step_begin()
        fake.advance_energy_mj(0, 1000 + fake.power_limit_mw(0) // 1000)


@pytest.fixture
def one_gpu(fake_nvml):
    fake_nvml.set_device_count(1)
    return fake_nvml


def test_a_failed_save_warns_once_and_the_choice_stands(one_gpu, tmp_path):
    path = tmp_path / "plo.json"
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=250,
                                    profile_path=path)
    path.mkdir()  # the write at the end of profiling fails
    with pytest.warns(RuntimeWarning, match="power-limit profile was not saved.*plo.json"):
        run_steps(plo, one_gpu, 20)
    assert plo.done and plo.optimal_power_limit is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_steps(plo, one_gpu, 3)  # said once
        plo.on_epoch_end()


def test_a_profile_in_folders_still_to_create_is_saved(one_gpu, tmp_path):
    path = tmp_path / "runs" / "today" / "plo.json"
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=250,
                                    profile_path=path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_steps(plo, one_gpu, 20)
    assert plo.done
    assert [m["power_limit"] for m in json.loads(path.read_text())["measurements"]] == [700, 450, 200]
