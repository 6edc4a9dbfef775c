"""GlobalPowerLimitOptimizer and the selectors, on the fake NVML library."""

from __future__ import annotations

import gc
import inspect
import json
import os
import random

import pytest

from conftest import run_python
from zeuscpp.callback import Callback, CallbackSet
from zeuscpp.exception import (
    ZeusGPUNoPermissionError,
    ZeusHeterogeneousError,
    ZeusInvalidArgumentError,
    ZeusNoPermissionError,
)
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.power_limit import (
    Energy,
    GlobalPowerLimitOptimizer,
    HFGlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    OptimumSelector,
    PowerLimitMeasurement,
    Time,
    ZeusCost,
)


def energy_mj_per_step(limit_mw: int) -> int:
    """A scripted GPU whose energy per step is lowest at 400 W."""
    w = limit_mw // 1000
    return (w - 400) ** 2 + 1000


def run_steps(plo, fake, steps: int, limits_seen: list[int] | None = None) -> None:
    for _ in range(steps):
        plo.on_step_begin()
        limit = fake.power_limit_mw(0)
        if limits_seen is not None:
            limits_seen.append(limit)
        fake.advance_energy_mj(0, energy_mj_per_step(limit))


@pytest.fixture
def one_gpu(fake_nvml):
    fake_nvml.set_device_count(1)
    return fake_nvml


def test_profiles_every_limit_high_to_low_then_keeps_the_optimum(one_gpu):
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=1, warmup_steps=1, profile_steps=3, pl_step=100)
    assert plo.power_limits == [700000, 600000, 500000, 400000, 300000, 200000]
    assert one_gpu.persistence(0)
    seen: list[int] = []
    run_steps(plo, one_gpu, 1 + 6 * 4 + 3, seen)
    assert plo.done and plo.state.phase == "done"
    # wait_steps + 1 warm-up + 3 profiled steps at the maximum, then 1 + 3 per
    # lower limit (the next limit is set on the step that ends a profile).
    expected = [700000] * 5
    for limit in plo.power_limits[1:]:
        expected += [limit] * 4
    assert seen[: len(expected)] == expected
    assert plo.optimal_power_limit == 400
    assert one_gpu.power_limit_mw(0) == 400000
    assert [m.power_limit for m in plo.measurements] == [700, 600, 500, 400, 300, 200]
    for m in plo.measurements:
        assert m.energy == pytest.approx(3 * energy_mj_per_step(m.power_limit * 1000) / 1000)
    del plo
    gc.collect()
    assert one_gpu.power_limit_mw(0) == 700000  # restored when the optimizer goes
    assert not one_gpu.persistence(0)


def test_profile_file_is_saved_then_applied_at_once(one_gpu, tmp_path):
    path = tmp_path / "profile.json"
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=250,
                                    profile_path=path)
    run_steps(plo, one_gpu, 20)
    assert plo.done
    saved = json.loads(path.read_text())
    assert [m["power_limit"] for m in saved["measurements"]] == [700, 450, 200]
    del plo
    gc.collect()
    again = GlobalPowerLimitOptimizer(monitor, Energy(), pl_step=250, profile_path=str(path))
    assert again.done and again.optimal_power_limit == 450
    assert one_gpu.power_limit_mw(0) == 450000
    path.write_text('{"measurements": [{"power_limit": 123, "energy": 1, "time": 1}]}')
    del again
    gc.collect()
    with pytest.raises(ValueError, match="not a candidate limit"):
        GlobalPowerLimitOptimizer(monitor, Energy(), pl_step=250, profile_path=path)


def test_epoch_end_during_profiling_retries_that_limit(one_gpu):
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=1, profile_steps=3, pl_step=250)
    run_steps(plo, one_gpu, 3)  # warm-up at 700, then profiling 700
    assert plo.state.phase == "profiling"
    plo.on_epoch_end()
    assert plo.state.phase == "ready" and plo.state.power_limit == 700
    assert not monitor.window_running("__GlobalPowerLimitOptimizer_700")
    run_steps(plo, one_gpu, 20)
    assert plo.done
    assert [m.power_limit for m in plo.measurements] == [700, 450, 200]


def test_python_selector_subclass_is_used(one_gpu):
    class LowestLimit(OptimumSelector):
        def __init__(self):  # no super().__init__(): fine, as upstream
            self.seen = []

        def select(self, measurements):
            self.seen = [(m.power_limit, m.energy, m.time) for m in measurements]
            return min(m.power_limit for m in measurements)

    selector = LowestLimit()
    monitor = ZeusMonitor(sync_execution_with=None)
    plo = GlobalPowerLimitOptimizer(monitor, selector, wait_steps=0, warmup_steps=0, profile_steps=1, pl_step=250)
    run_steps(plo, one_gpu, 10)
    assert plo.optimal_power_limit == 200 and one_gpu.power_limit_mw(0) == 200000
    assert [p for p, _, _ in selector.seen] == [700, 450, 200]
    assert plo.selector_name == "LowestLimit"


@pytest.mark.parametrize(
    "result,message",
    [(333, "not one of the measured power limits"), ("700", "must be a power limit in W")],
)
def test_python_selector_results_are_checked(one_gpu, result, message):
    class Bad(OptimumSelector):
        def select(self, measurements):
            return result

    plo = GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), Bad(), wait_steps=0, warmup_steps=0,
                                    profile_steps=1, pl_step=250)
    with pytest.raises(ZeusInvalidArgumentError, match=message):
        run_steps(plo, one_gpu, 10)


def test_python_selector_exceptions_propagate(one_gpu):
    class Raises(OptimumSelector):
        def select(self, measurements):
            raise LookupError("selector failed")

    plo = GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), Raises(), wait_steps=0, warmup_steps=0,
                                    profile_steps=1, pl_step=500)
    with pytest.raises(LookupError, match="selector failed"):
        run_steps(plo, one_gpu, 10)


def test_bad_parameters_raise_with_the_library_message(one_gpu):
    monitor = ZeusMonitor(sync_execution_with=None)
    with pytest.raises(ValueError, match="profile_steps must be > 0, got 0"):
        GlobalPowerLimitOptimizer(monitor, profile_steps=0)
    with pytest.raises(ValueError, match="wait_steps must be >= 0"):
        GlobalPowerLimitOptimizer(monitor, wait_steps=-1)
    with pytest.raises(ValueError, match="pl_step must be > 0"):
        GlobalPowerLimitOptimizer(monitor, pl_step=0)
    with pytest.raises(ValueError, match=r"eta must be in \[0, 1\], got 1.5"):
        ZeusCost(eta_knob=1.5)
    with pytest.raises(ValueError, match="world size must be at least 1"):
        ZeusCost(0.5, world_size=0)
    with pytest.raises(ValueError, match="factor must be >= 1.0"):
        MaxSlowdownConstraint(factor=0.9)
    with pytest.raises(ValueError, match="optimum_selector must be an OptimumSelector"):
        GlobalPowerLimitOptimizer(monitor, optimum_selector=42)
    with pytest.raises(TypeError):
        GlobalPowerLimitOptimizer(monitor, wait_steps="1")
    with pytest.raises(TypeError):
        GlobalPowerLimitOptimizer("not a monitor")
    assert one_gpu.power_limit_mw(0) == 700000


def test_heterogeneous_gpus_are_refused(fake_nvml):
    fake_nvml.set_name(1, "NVIDIA A100-SXM4-40GB")
    monitor = ZeusMonitor(sync_execution_with=None)
    with pytest.raises(ZeusHeterogeneousError, match="must be identical") as info:
        GlobalPowerLimitOptimizer(monitor)
    assert isinstance(info.value, ValueError)


def test_missing_privileges_say_what_to_do(one_gpu):
    one_gpu.set_permission_denied(True)
    with pytest.raises(ZeusNoPermissionError, match="CAP_SYS_ADMIN") as info:
        GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None))
    assert isinstance(info.value, ZeusGPUNoPermissionError)


def test_dry_run_changes_nothing(one_gpu):
    plo = GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), Energy(), wait_steps=0, warmup_steps=0,
                                    profile_steps=1, pl_step=250, dry_run=True)
    run_steps(plo, one_gpu, 10)
    assert plo.done and plo.dry_run
    assert one_gpu.call_count("nvmlDeviceSetPowerManagementLimit") == 0
    assert one_gpu.call_count("nvmlDeviceSetPersistenceMode") == 0


def test_default_selector_is_zeus_cost_half(one_gpu):
    plo = GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None))
    assert plo.selector_name == "zeus-cost(eta=0.5)"
    assert plo.pl_step == 25000 and plo.warmup_steps == 10 and plo.profile_steps == 40


def test_it_is_a_callback(one_gpu):
    calls = []

    class Recorder(Callback):
        def on_step_begin(self):
            calls.append("step")

    plo = GlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), wait_steps=5)
    assert isinstance(plo, Callback)
    callbacks = CallbackSet([plo, Recorder()])
    callbacks.on_train_begin()
    callbacks.on_epoch_begin()
    callbacks.on_step_begin()
    callbacks.on_step_end()
    callbacks.on_evaluate(0.5)
    callbacks.on_epoch_end()
    callbacks.on_instruction_begin("forward")
    callbacks.on_instruction_end("forward")
    callbacks.on_train_end()
    assert calls == ["step"]
    assert plo.state.steps == 5


def test_hf_wrapper_has_the_same_signature_and_needs_transformers(one_gpu):
    ours = inspect.signature(GlobalPowerLimitOptimizer.__init__)
    hf = inspect.signature(HFGlobalPowerLimitOptimizer.__init__)
    assert ours == hf  # upstream's test_HFGPLO_signature_equivalence
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="transformers"):
            HFGlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), Energy())
    else:  # pragma: no cover - transformers is not a Debian package
        pytest.skip("transformers is installed here")


def test_hf_wrapper_is_a_trainer_callback_that_forwards(tmp_path):
    """With transformers importable, it subclasses TrainerCallback and forwards the hooks."""
    package = tmp_path / "transformers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "trainer_callback.py").write_text("class TrainerCallback:\n    pass\n")
    result = run_python(
        """
        from transformers.trainer_callback import TrainerCallback
        from zeuscpp.monitor import ZeusMonitor
        from zeuscpp.optimizer.power_limit import Done, Energy, HFGlobalPowerLimitOptimizer
        callback = HFGlobalPowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), Energy(), wait_steps=0,
                                               warmup_steps=0, profile_steps=1, pl_step=500)
        assert isinstance(callback, TrainerCallback)
        for _ in range(10):
            callback.on_step_begin(None, None, None)
        callback.on_epoch_end(None, None, None)
        assert isinstance(callback.optimizer.state, Done), callback.optimizer.state
        print("ok")
        """,
        env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ['PYTHONPATH']}"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def _upstream_selectors():
    """Independent re-statements of the Python Zeus's selector formulas."""

    def energy(ms):
        return min(ms, key=lambda m: m.energy).power_limit

    def time(ms):
        return min(ms, key=lambda m: m.time).power_limit

    def zeus_cost(eta, world):
        def select(ms):
            max_power = max(m.power_limit for m in ms) * world
            return min(ms, key=lambda m: eta * m.energy + (1 - eta) * max_power * m.time).power_limit

        return select

    def max_slowdown(factor):
        def select(ms):
            top = max(m.power_limit for m in ms)
            ref = next(m.time for m in ms if m.power_limit == top)
            return min(m.power_limit for m in ms if m.time <= factor * ref)

        return select

    return energy, time, zeus_cost, max_slowdown


def test_library_selectors_agree_with_the_upstream_formulas():
    energy, time, zeus_cost, max_slowdown = _upstream_selectors()
    rng = random.Random(7)
    for _ in range(300):
        limits = list(range(300, 99, -25))
        ms = [PowerLimitMeasurement(power_limit=p, energy=rng.uniform(100, 1000), time=rng.uniform(1, 10))
              for p in limits]
        assert Energy().select(ms) == energy(ms)
        assert Time().select(ms) == time(ms)
        eta, world = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]), rng.randint(1, 8)
        assert ZeusCost(eta, world).select(ms) == zeus_cost(eta, world)(ms)
        factor = rng.choice([1.0, 1.1, 1.5, 3.0, 100.0])
        assert MaxSlowdownConstraint(factor).select(ms) == max_slowdown(factor)(ms)
    with pytest.raises(ValueError, match="no power-limit measurements"):
        Energy().select([])


def test_measurement_values():
    m = PowerLimitMeasurement(power_limit=250, energy=10.5, time=2.0)
    assert (m.power_limit, m.energy, m.time) == (250, 10.5, 2.0)
    assert isinstance(m.power_limit, int)
    assert PowerLimitMeasurement(power_limit=212.5, energy=1, time=1).power_limit == 212.5
    assert m == PowerLimitMeasurement(250, 10.5, 2.0)
    assert repr(m) == "PowerLimitMeasurement(power_limit=250, energy=10.5, time=2.0)"
