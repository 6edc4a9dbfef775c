"""ChasePowerLimitOptimizer: the library's Chase controller from Python, on the fake NVML library.

A saved profile makes the measurements exact (no timing noise), so the choice at
each signal is known: with eta 0.5 and a normaliser of 900, a signal of 100 gives
eta_eff 0.1 (700 W: run fast) and 900 gives 0.5 (450 W). The clock is injected.
"""

from __future__ import annotations

import datetime
import gc
import inspect
import json
import math
import os
import subprocess
import sys
import warnings

import pytest

from conftest import run_python
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.monitor.carbon import ConstantCarbonIntensity
from zeuscpp.monitor.price import ConstantElectricityPrice
from zeuscpp.optimizer.power_limit import (
    ChaseDecision,
    ChasePowerLimitOptimizer,
    HFChasePowerLimitOptimizer,
    ZeusCost,
)

T0 = 1_704_067_200  # 2024-01-01T00:00:00Z, an even hour
HOUR = 3600
LOW, HIGH = 100.0, 900.0
# limit (W) -> (energy J, time s): fastest at 700 W, least energy at 200 W.
PROFILE = {700: (600.0, 1.0), 450: (420.0, 1.2), 200: (380.0, 2.0)}


def alternating(start: int, period: int) -> float:
    """LOW in even UTC hours, HIGH in odd ones."""
    return LOW if (start // HOUR) % 2 == 0 else HIGH


@pytest.fixture
def one_gpu(fake_nvml):
    fake_nvml.set_device_count(1)
    return fake_nvml


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({"measurements": [
        {"power_limit": w, "energy": e, "time": t} for w, (e, t) in PROFILE.items()]}))
    return path


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(profile, clock, signal=alternating, **kwargs):
    kwargs.setdefault("kind", "carbon")
    return ChasePowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), signal, eta=0.5, period_s=HOUR,
                                    signal_max=HIGH, clock=clock, pl_step=250, profile_path=profile, **kwargs)


def step_at(chase, clock, unix: float) -> None:
    clock.now = unix
    chase.on_step_begin()


def test_limits_change_at_period_boundaries_and_every_decision_is_logged(one_gpu, profile):
    clock = Clock(T0 + 10)
    chase = make(profile, clock)
    assert chase.done and chase.world_size == 1 and chase.signal_kind == "carbon"
    assert chase.decisions == []
    chase.on_step_begin()  # a saved profile: the first step decides
    [d] = chase.decisions
    assert isinstance(d, ChaseDecision)
    assert d.period_start == datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    assert d.period_start_utc == T0
    assert (d.signal_seen, d.forecast) == (HIGH, HIGH)  # the hour before T0; persistence
    assert d.eta_eff == pytest.approx(0.5 * HIGH / (0.5 * HIGH + 0.5 * HIGH))
    assert d.power_limit == 450 and one_gpu.power_limit_mw(0) == 450000
    assert chase.forecaster_name == "persistence"

    step_at(chase, clock, T0 + HOUR - 1)  # same hour: nothing new
    assert len(chase.decisions) == 1 and one_gpu.power_limit_mw(0) == 450000
    step_at(chase, clock, T0 + HOUR)  # after a low hour: fast
    assert one_gpu.power_limit_mw(0) == 700000
    step_at(chase, clock, T0 + 2 * HOUR + 5)  # after a high hour: slow again
    assert one_gpu.power_limit_mw(0) == 450000

    decisions = chase.decisions
    assert [x.period_start_utc for x in decisions] == [T0, T0 + HOUR, T0 + 2 * HOUR]
    assert [x.forecast for x in decisions] == [HIGH, LOW, HIGH]
    assert [x.power_limit for x in decisions] == [450, 700, 450]
    assert decisions[1].eta_eff == pytest.approx(0.5 * LOW / (0.5 * LOW + 0.5 * HIGH))
    # Chase is Zeus's cost at eta_eff (docs/chase.md), on the same profile.
    for x in decisions:
        assert ZeusCost(x.eta_eff, 1).select(chase.measurements) == x.power_limit
    csv = chase.decisions_csv().splitlines()
    assert csv[0] == "period_start_utc,signal_seen,forecast,eta_eff,power_limit_w"
    assert csv[2] == "2024-01-01T01:00:00Z,100,100,0.1,700"
    del chase
    gc.collect()
    assert one_gpu.power_limit_mw(0) == 700000  # the GPU's settings are restored


def test_a_failing_signal_keeps_the_limit_warns_once_per_outage_and_retries(one_gpu, profile):
    down: set[int] = set()
    calls: list[int] = []

    def flaky(start: int, period: int) -> float:
        calls.append(start)
        if start in down:
            raise ConnectionError("grid API unreachable (scripted)")
        return alternating(start, period)

    clock = Clock(T0 + 10)
    chase = make(profile, clock, flaky)
    chase.on_step_begin()
    step_at(chase, clock, T0 + HOUR)
    assert one_gpu.power_limit_mw(0) == 700000
    down.update({T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step_at(chase, clock, T0 + 2 * HOUR)
        n = len(calls)
        for _ in range(5):
            step_at(chase, clock, T0 + 2 * HOUR + 60)  # same period: no retry storm
        assert len(calls) == n
        step_at(chase, clock, T0 + 3 * HOUR)
        step_at(chase, clock, T0 + 4 * HOUR)
    outage = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(outage) == 1, [str(w.message) for w in caught]
    assert "grid API unreachable" in str(outage[0].message) and "700 W" in str(outage[0].message)
    assert chase.failed_periods == 3
    assert "ConnectionError" in chase.last_error
    assert one_gpu.power_limit_mw(0) == 700000  # kept
    assert len(chase.decisions) == 2

    down.clear()
    step_at(chase, clock, T0 + 5 * HOUR)  # retried at the next boundary: hour 4 was low
    assert chase.last_error is None
    assert chase.decisions[-1].period_start_utc == T0 + 5 * HOUR
    down.add(T0 + 5 * HOUR)
    with pytest.warns(RuntimeWarning, match="no grid signal"):  # a new outage warns again
        step_at(chase, clock, T0 + 6 * HOUR)


def test_signal_sources_providers_files_and_bad_input(one_gpu, profile, tmp_path):
    clock = Clock(T0 + 10)
    chase = make(profile, clock, ConstantCarbonIntensity(300.0), kind=None)
    chase.on_step_begin()
    assert chase.signal_kind == "carbon" and chase.decisions[0].signal_seen == pytest.approx(300.0)
    del chase
    gc.collect()
    chase = make(profile, clock, ConstantElectricityPrice(0.25), kind=None)
    chase.on_step_begin()
    assert chase.signal_kind == "price" and chase.decisions[0].forecast == pytest.approx(0.25)
    del chase
    gc.collect()

    csv = tmp_path / "signal.csv"
    rows = ["timestamp,value"] + [f"{T0 - (48 - h) * HOUR},{alternating(T0 - (48 - h) * HOUR, HOUR)}"
                                  for h in range(48)]
    csv.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match="unit"):
        make(profile, clock, str(csv), kind=None)  # a file without a unit is refused
    chase = make(profile, clock, csv, kind=None, unit="g/kWh")
    chase.on_step_begin()
    assert chase.decisions[0].signal_seen == HIGH and chase.decisions[0].power_limit == 450
    del chase
    gc.collect()

    with pytest.raises(ValueError, match="kind"):
        make(profile, clock, alternating, kind=None)
    with pytest.raises(ValueError, match="eta"):
        ChasePowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), alternating, eta=1.5, kind="carbon")
    with pytest.raises(ValueError, match="forecaster|oracle"):
        make(profile, clock, forecaster="oracle")
    with pytest.raises(ValueError, match="signal must be"):
        make(profile, clock, 42, kind=None)


def test_profiles_first_then_decides(one_gpu):
    """Without a saved profile, profiling drives the limit; Chase decides on the step after."""
    clock = Clock(T0 + 10)
    chase = ChasePowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), alternating, 0.5, HOUR, kind="carbon",
                                     signal_max=HIGH, clock=clock, wait_steps=0, warmup_steps=0, profile_steps=1,
                                     pl_step=250)
    steps = 0
    while not chase.done:
        assert chase.decisions == []
        assert chase.state.phase in ("ready", "warmup", "profiling")
        chase.on_step_begin()
        one_gpu.advance_energy_mj(0, 1000)
        steps += 1
        assert steps < 50
    assert chase.state.phase == "done" and len(chase.measurements) == 3
    chase.on_step_begin()
    [d] = chase.decisions
    assert ZeusCost(d.eta_eff, 1).select(chase.measurements) == d.power_limit
    assert one_gpu.power_limit_mw(0) == d.power_limit * 1000


def test_a_raising_clock_or_a_bad_value_is_reported(one_gpu, profile):
    chase = make(profile, Clock(T0 + 10), lambda s, p: math.nan)
    with pytest.warns(RuntimeWarning, match="not a finite number"):
        chase.on_step_begin()
    assert chase.decisions == [] and chase.failed_periods == 1


def test_hf_wrapper_has_the_same_signature_and_needs_transformers(one_gpu):
    assert inspect.signature(ChasePowerLimitOptimizer.__init__) == inspect.signature(
        HFChasePowerLimitOptimizer.__init__)
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="transformers"):
            HFChasePowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), alternating, kind="carbon")
    else:  # pragma: no cover - transformers is not a Debian package
        pytest.skip("transformers is installed here")


def test_hf_wrapper_is_a_trainer_callback_that_forwards(tmp_path, profile):
    package = tmp_path / "transformers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "trainer_callback.py").write_text("class TrainerCallback:\n    pass\n")
    result = run_python(
        f"""
        from transformers.trainer_callback import TrainerCallback
        from zeuscpp.monitor import ZeusMonitor
        from zeuscpp.optimizer.power_limit import HFChasePowerLimitOptimizer
        now = [{T0} + 10]
        callback = HFChasePowerLimitOptimizer(ZeusMonitor(sync_execution_with=None), lambda s, p: 500.0,
                                              kind="carbon", clock=lambda: now[0], wait_steps=0,
                                              warmup_steps=0, profile_steps=1, pl_step=500)
        assert isinstance(callback, TrainerCallback)
        for _ in range(10):
            callback.on_step_begin(None, None, None)
        callback.on_epoch_end(None, None, None)
        assert callback.optimizer.done
        assert [d.signal_seen for d in callback.optimizer.decisions] == [500.0]
        now[0] += 3600
        callback.on_step_begin(None, None, None)
        assert len(callback.optimizer.decisions) == 2
        print("ok")
        """,
        env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ['PYTHONPATH']}"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_two_ranks_apply_rank_zeros_decision_at_the_same_step(tmp_path):
    """torch.distributed (gloo, two processes): one decision for all ranks, at the same step."""
    pytest.importorskip("torch.distributed")
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1", GLOO_SOCKET_IFNAME="lo")
    worker = os.path.join(os.path.dirname(__file__), "chase_distributed_worker.py")
    outs = [tmp_path / f"rank{r}.json" for r in range(2)]
    profile = tmp_path / "profile.json"  # the simulated GPU's limits (100-300 W)
    profile.write_text(json.dumps({"measurements": [
        {"power_limit": 300, "energy": 600.0, "time": 1.0},
        {"power_limit": 200, "energy": 420.0, "time": 1.2},
        {"power_limit": 100, "energy": 300.0, "time": 2.0}]}))
    procs = [
        subprocess.Popen([sys.executable, worker, str(r), "2", str(tmp_path / "rendezvous"), str(outs[r]),
                          str(profile)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for r in range(2)
    ]
    logs = [p.communicate(timeout=240)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    r0, r1 = (json.loads(o.read_text()) for o in outs)
    assert r0["reducer"] == r1["reducer"] == "TorchDistributedReducer"
    assert r0["world_size"] == r1["world_size"] == 2  # one GPU on each rank
    assert r1["reads"] == 0 and r0["reads"] > 0  # rank 0 alone reads the signal
    assert r0["failed"] == r1["failed"] == 0
    # Periods T0, T0+1h (rank 1's clock still said 00:59:58), T0+2h, T0+3h.
    assert [d[0] for d in r0["decisions"]] == [T0, T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR]
    assert r1["decisions"] == r0["decisions"]
    assert [d[1] for d in r0["decisions"]] == [HIGH, LOW, HIGH, LOW]
    assert r1["limits"] == r0["limits"]  # the same limit after every step
    # Each step's limit is the decision of its period; the first boundary changes
    # it, so a rank that saw that boundary a step late would differ there.
    assert r0["limits"] == [r0["decisions"][k][4] * 1000 for k in (0, 1, 1, 2, 3)]
    assert r0["limits"] == [100000, 200000, 200000, 100000, 200000]
    # The same collective calls in the same order on both ranks.
    assert [c[0] for c in r0["calls"]] == [c[0] for c in r1["calls"]]


def test_refit_periods_refits_the_forecaster(one_gpu, profile):
    def flat_then_alternating(start: int, period: int) -> float:
        return 500.0 if start < T0 else alternating(start, period)

    clock = Clock(T0 + 10)
    chase = make(profile, clock, flat_then_alternating, refit_periods=2)
    chase.on_step_begin()
    assert chase.forecaster_mape == 0.0  # fitted on a flat day
    step_at(chase, clock, T0 + HOUR)
    assert chase.forecaster_mape == 0.0  # not due yet
    step_at(chase, clock, T0 + 2 * HOUR)
    assert chase.forecaster_mape > 0.0  # refitted on a window with hours 0 and 1
    with pytest.raises(ValueError, match="refit_periods"):
        make(profile, clock, refit_periods=-1)
