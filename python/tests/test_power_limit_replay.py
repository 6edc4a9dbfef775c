"""The Python Zeus's own power-limit profiling logs, replayed through our optimizer.

Upstream's tests/optimizer/test_power_limit_optimizer.py replays twelve real
profiling logs (V100 and A40, 1-4 GPUs; data/zeus-traces/plo_replay_logs, see
its README for provenance and licence) with ReplayZeusMonitor through a fake
training loop, for eta in {0, .25, .5, .75, 1} and 0, 1, 2 or "every time"
interruptions of profiling. As there, this checks: the exact sequence of power
limits set (here read from the fake NVML's journal of
nvmlDeviceSetPowerManagementLimit calls), that the chosen limit is the ZeusCost
argmin over the log, that the profile file written holds the log's
measurements, and that optimizers loading it pick the Energy, Time and
MaxSlowdownConstraint optima of the log at once. The reference optima are
computed here from the CSV, independently of the library's selectors.
"""

from __future__ import annotations

import csv
import gc
import json
import os
import pathlib

import pytest

from conftest import SOURCE_DIR
from zeuscpp.optimizer.power_limit import (
    Done,
    Energy,
    GlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    Profiling,
    Ready,
    Time,
    Warmup,
    ZeusCost,
)
from zeuscpp.utils.testing import ReplayZeusMonitor

LOG_DIR = pathlib.Path(SOURCE_DIR) / "data" / "zeus-traces" / "plo_replay_logs"
LOGS = sorted(LOG_DIR.glob("*.csv"))


class ReplayLog:
    """A profiling log and the optima upstream's test derives from it (with pandas there)."""

    def __init__(self, path: pathlib.Path) -> None:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        gpu_columns = [c for c in rows[0] if c.startswith("gpu") and c.endswith("_energy")]
        self.path = path
        self.gpu_indices = [int(c[3:-len("_energy")]) for c in gpu_columns]
        self.power_limits = [int(r["window_name"].rsplit("_", 1)[1]) for r in rows]
        self.times = [float(r["elapsed_time"]) for r in rows]
        self.energies = [sum(float(r[c]) for c in gpu_columns) for r in rows]

    def _argmin(self, values: list[float]) -> int:
        # First row on ties, as pandas' argmin (rows go from the highest limit down).
        return self.power_limits[min(range(len(values)), key=values.__getitem__)]

    def zeus_cost_optimum(self, eta: float) -> int:
        max_power = max(self.power_limits) * len(self.gpu_indices)
        return self._argmin([eta * e + (1 - eta) * max_power * t for e, t in zip(self.energies, self.times)])

    def time_optimum(self) -> int:
        return self._argmin(self.times)

    def energy_optimum(self) -> int:
        return self._argmin(self.energies)

    def max_slowdown_optimum(self, factor: float) -> int:
        reference = self.times[self.power_limits.index(max(self.power_limits))]
        return min(p for p, t in zip(self.power_limits, self.times) if t <= reference * factor)


def test_the_twelve_logs_are_there():
    assert len(LOGS) == 12, f"expected the 12 upstream logs in {LOG_DIR}"


class Journal:
    """The fake NVML's record of power-limit calls: (GPU index, mW) in call order."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        self.seen = 0

    def new_calls(self) -> list[tuple[int, int]]:
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        calls = []
        for line in lines[self.seen :]:
            function, index, value = line.split()
            if function == "nvmlDeviceSetPowerManagementLimit":
                calls.append((int(index), int(value)))
        self.seen = len(lines)
        return calls


@pytest.fixture(scope="module", autouse=True)
def quick_gc():
    """The fixtures' gc.collect() per test, cheap: pytest's own objects are set aside."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(params=LOGS, ids=lambda p: p.stem)
def replay_log(request) -> ReplayLog:
    return ReplayLog(request.param)


@pytest.fixture
def journal(fake_nvml, replay_log, monkeypatch, tmp_path) -> Journal:
    """The fake NVML with the log's GPUs and limit range, journaling its setter calls."""
    path = tmp_path / "nvml-journal"
    monkeypatch.setenv("ZEUS_FAKE_NVML_JOURNAL", str(path))
    fake_nvml.set_device_count(len(replay_log.gpu_indices))
    low, high = min(replay_log.power_limits) * 1000, max(replay_log.power_limits) * 1000
    for i in replay_log.gpu_indices:
        # Current limit below the maximum, so the optimizer's first call is seen.
        fake_nvml.set_power_limits(i, low, high, high, low)
    return Journal(path)


def training_loop(plo, steps_per_epoch: int, num_epochs: int, wait_steps: int = 0) -> None:
    """Upstream's fake training loop."""
    for epoch in range(num_epochs):
        plo.on_epoch_begin()
        for step in range(steps_per_epoch):
            plo.on_step_begin()
            if wait_steps > 0 and epoch == 0 and step < wait_steps:
                assert isinstance(plo.state, Ready)
            plo.on_step_end()
        plo.on_epoch_end()


def schedule(log: ReplayLog, num_interrupts) -> tuple[int, int, int]:
    """(limits profiled per epoch, steps per epoch, epochs), as upstream's test sets them."""
    n = len(log.power_limits)
    if num_interrupts == 0:
        return n, 50 * n + 10, 3
    if num_interrupts == 1:  # interrupted during warm-up
        return n // 2, 50 * (n // 2) + 5, 4
    if num_interrupts == 2:  # interrupted during profiling
        return n // 3, 50 * (n // 3) + 15, 5
    return 1, 50 + 50, n + 2  # "every time": on each limit's last profiling step


def expected_calls(log: ReplayLog, per_epoch: int, optimum: int) -> list[tuple[int, int]]:
    """Upstream's expected sequence: a high-to-low scan in which each epoch's
    interrupted limit is followed by the maximum and retried, then the optimum
    (unless it is the limit last set)."""
    calls = []
    gpus = sorted(log.gpu_indices)
    limits = sorted(log.power_limits, reverse=True)
    limit = -1
    while limits:
        for _ in range(per_epoch + 1):
            if not limits:
                break
            limit = limits.pop(0)
            calls += [(i, limit * 1000) for i in gpus]
        else:
            calls += [(i, max(log.power_limits) * 1000) for i in gpus]
            limits.insert(0, limit)
    if limit != optimum:
        calls += [(i, optimum * 1000) for i in gpus]
    return calls


@pytest.mark.parametrize("eta_knob", [0.0, 0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("num_interrupts", [0, 1, 2, "every time"])
def test_replayed_log(replay_log, journal, fake_nvml, eta_knob, num_interrupts, tmp_path):
    profile = tmp_path / "power_limit_optimizer.json"
    monitor = ReplayZeusMonitor(log_file=replay_log.path, ignore_sync_execution=True, match_window_name=False)
    assert monitor.gpu_indices == replay_log.gpu_indices

    # Profiling, interrupted as scheduled.
    plo = GlobalPowerLimitOptimizer(
        monitor,
        optimum_selector=ZeusCost(eta_knob=eta_knob, world_size=len(monitor.gpu_indices)),
        wait_steps=1,
        warmup_steps=10,
        profile_steps=40,
        pl_step=25,
        profile_path=profile,
    )
    per_epoch, steps, epochs = schedule(replay_log, num_interrupts)
    training_loop(plo, steps, epochs, wait_steps=1)
    optimum = replay_log.zeus_cost_optimum(eta_knob)
    assert isinstance(plo.state, Done)
    assert plo.state.optimal_power_limit == optimum * 1000
    assert journal.new_calls() == expected_calls(replay_log, per_epoch, optimum)
    assert not monitor.ongoing_windows  # every interrupted window was cancelled

    # The profile written is the log's, limit by limit (energy summed over GPUs).
    saved = json.loads(profile.read_text())["measurements"]
    assert [m["power_limit"] for m in saved] == replay_log.power_limits
    assert [m["time"] for m in saved] == pytest.approx(replay_log.times, rel=1e-12)
    assert [m["energy"] for m in saved] == pytest.approx(replay_log.energies, rel=1e-12)
    gpus = sorted(replay_log.gpu_indices)
    del plo
    # Unlike upstream (the maximum, at exit), the original limit comes back when the
    # optimizer goes (skipped, as every unchanged limit, when the optimum is that limit).
    original = min(replay_log.power_limits)
    assert journal.new_calls() == [(i, original * 1000) for i in gpus if optimum != original]

    # Optimizers that load the profile choose at once.
    selectors = [(Energy(), replay_log.energy_optimum()), (Time(), replay_log.time_optimum())]
    for factor in [1.0, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 100.0]:
        selectors.append((MaxSlowdownConstraint(factor=factor), replay_log.max_slowdown_optimum(factor)))
    for selector, chosen in selectors:
        loaded = GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, profile_path=profile)
        assert isinstance(loaded.state, Done), selector
        assert loaded.state.optimal_power_limit == chosen * 1000, selector
        del loaded  # restores the limit at once (no reference cycle keeps it)
    journal.new_calls()

    # Loading the profile sets the ZeusCost optimum straight away; training changes nothing.
    plo = GlobalPowerLimitOptimizer(
        monitor,
        optimum_selector=ZeusCost(eta_knob=eta_knob, world_size=len(monitor.gpu_indices)),
        warmup_steps=10,
        profile_steps=40,
        pl_step=25,
        profile_path=profile,
    )
    assert isinstance(plo.state, Done)
    assert journal.new_calls() == [(i, optimum * 1000) for i in gpus if optimum != original]
    assert all(fake_nvml.power_limit_mw(i) == optimum * 1000 for i in gpus)
    training_loop(plo, steps, 1)
    assert journal.new_calls() == []


def test_states_follow_upstreams_classes(fake_nvml, tmp_path):
    """Ready -> Warmup -> Profiling -> ... -> Done, with upstream's fields (mW)."""
    log = LOGS[0]
    fake_nvml.set_device_count(1)
    limits = ReplayLog(log).power_limits
    fake_nvml.set_power_limits(0, min(limits) * 1000, max(limits) * 1000, max(limits) * 1000, max(limits) * 1000)
    monitor = ReplayZeusMonitor(log_file=log, ignore_sync_execution=True, match_window_name=False)
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=1, warmup_steps=2, profile_steps=3, pl_step=25)
    high = plo.power_limits[0]
    assert plo.state == Ready(next_power_limit=high, steps=2)
    plo.on_step_begin()
    plo.on_step_begin()
    assert plo.state == Warmup(current_power_limit=high, steps=2)
    assert plo.state.phase == "warmup" and plo.state.power_limit == high // 1000
    plo.on_step_begin()
    plo.on_step_begin()
    assert isinstance(plo.state, Profiling) and plo.state.current_power_limit == high
    plo.on_epoch_end()  # interrupted: retried from Ready
    assert plo.state == Ready(next_power_limit=high, steps=1)
    while not isinstance(plo.state, Done):
        plo.on_step_begin()
    assert plo.state.optimal_power_limit == ReplayLog(log).energy_optimum() * 1000
    assert plo.state.steps == 0 and plo.state.phase == "done"


def test_replay_monitor_windows(tmp_path):
    """Upstream's ReplayZeusMonitor rules: rows in end order, names matched, cancel consumes none."""
    log = tmp_path / "log.csv"
    log.write_text(
        "start_time,window_name,elapsed_time,gpu0_energy,gpu2_energy,cpu0_energy\n"
        "1.0,a,2.5,10.0,20.0,3.0\n"
        "2.0,b,1.5,,40.0,4.0\n"
        "3.0,z,1.0,1.0,1.0,1.0\n"
    )
    monitor = ReplayZeusMonitor(log_file=log, ignore_sync_execution=True)
    assert monitor.gpu_indices == [0, 2] and monitor.cpu_indices == [0]
    monitor.begin_window("a")
    with pytest.raises(RuntimeError, match="already running"):
        monitor.begin_window("a")
    monitor.begin_window("a", restart=True)
    cancelled = monitor.end_window("a", cancel=True)
    assert cancelled.time == 0.0 and cancelled.gpu_energy == {0: 0.0, 2: 0.0}
    with pytest.raises(RuntimeError, match="not running"):
        monitor.end_window("a")
    monitor.begin_window("a")
    m = monitor.end_window("a")
    assert m.time == 2.5 and m.gpu_energy == {0: 10.0, 2: 20.0} and m.cpu_energy == {0: 3.0}
    assert m.total_energy == 30.0
    monitor.begin_window("b")
    assert monitor.end_window("b").gpu_energy == {2: 40.0}  # an empty cell: a failed reading
    monitor.begin_window("c")
    with pytest.raises(RuntimeError, match="window 'z', not 'c'"):
        monitor.end_window("c")  # consumes the row, as upstream
    monitor.begin_window("b")
    with pytest.raises(RuntimeError, match="no rows left"):
        monitor.end_window("b")
    renamed = ReplayZeusMonitor(gpu_indices=[5, 6], log_file=log, match_window_name=False)
    renamed.begin_window("x", sync_execution=False)
    assert renamed.end_window("x", sync_execution=False).gpu_energy == {5: 10.0, 6: 20.0}
    with pytest.raises(ValueError, match="log_file"):
        ReplayZeusMonitor()
    with pytest.raises(ValueError, match="1 GPU"):
        ReplayZeusMonitor(gpu_indices=[0], log_file=log)
    bad = tmp_path / "bad.csv"
    bad.write_text("time,name\n")
    with pytest.raises(ValueError, match="not a ZeusMonitor log"):
        ReplayZeusMonitor(log_file=bad)


@pytest.mark.parametrize(
    "row, column",
    [
        ("1.0,a,nan,1.0", "elapsed_time"),
        ("1.0,a,-2.0,1.0", "elapsed_time"),
        ("1.0,a,inf,1.0", "elapsed_time"),
        ("1.0,a,1.0,NaN", "gpu0_energy"),
        ("1.0,a,1.0,-5", "gpu0_energy"),
        ("1.0,a,1.0,-inf", "gpu0_energy"),
        ("1.0,a,1.0,1e999", "gpu0_energy"),
        ("1.0,a,1.0,lots", "gpu0_energy"),
    ],
)
def test_replay_monitor_refuses_amounts_no_gpu_measures(tmp_path, row, column):
    """NaN, infinite or negative times and energies are errors naming line and column."""
    log = tmp_path / "log.csv"
    log.write_text("start_time,window_name,elapsed_time,gpu0_energy\n" + row + "\n")
    monitor = ReplayZeusMonitor(log_file=log, ignore_sync_execution=True)
    monitor.begin_window("a")
    with pytest.raises(RuntimeError, match=f"line 2: {column} is"):
        monitor.end_window("a")


def test_replays_a_log_our_monitor_wrote(tmp_path):
    """A log zeuscpp's ZeusMonitor writes replays into the same measurements."""
    from zeuscpp.monitor import ZeusMonitor

    log = tmp_path / "ours.csv"
    real = ZeusMonitor(log_file=log, sync_execution_with=None)
    measured = []
    for name in ("one", "two"):
        real.begin_window(name)
        measured.append(real.end_window(name))
    del real
    gc.collect()
    replay = ReplayZeusMonitor(log_file=log)
    for name, m in zip(("one", "two"), measured):
        replay.begin_window(name)
        r = replay.end_window(name)
        # The log has 6 decimals.
        assert r.time == pytest.approx(m.time, abs=1e-6)
        assert r.gpu_energy == pytest.approx(m.gpu_energy, abs=1e-6)


def test_optimizer_rejects_a_monitor_without_the_methods(fake_nvml):
    with pytest.raises(TypeError, match="begin_window"):
        GlobalPowerLimitOptimizer(object())
    fake_nvml.set_device_count(1)

    class TooManyGpus:
        gpu_indices = [0, 3]

        def begin_window(self, key, sync_execution=True):
            pass

        def end_window(self, key, sync_execution=True, cancel=False):
            pass

    with pytest.raises(ValueError, match="measures GPU 3"):
        GlobalPowerLimitOptimizer(TooManyGpus())
    assert os.environ.get("ZEUS_GPU_BACKEND") == "nvml"
