"""zeuscpp.profile (upstream zeus.profile) on the simulated GPU.

The module's clock is replaced by a scripted one (each workload iteration
takes exactly 1/64 s, sleeps only advance it), so the schedule of a trial is
exact: calibration, cooldown, warm-up, then the measured window; the energy
comes from the simulated GPU's counter through a real ZeusMonitor, or from a
replayed log where the statistics must be exact.
"""

from __future__ import annotations

import math
import statistics
import types

import pytest

import zeuscpp.profile as profile
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.utils.testing import ReplayZeusMonitor

ITERATION = 1 / 64  # scripted seconds per workload call (binary-exact: no rounding in the counts)


class Script:
    """A scripted clock and a log of what the profiler did, in order."""

    def __init__(self) -> None:
        self.now = 1024.0
        self.events: list[str] = []

    def clock(self) -> types.SimpleNamespace:
        return types.SimpleNamespace(monotonic=lambda: self.now, sleep=self.sleep)

    def sleep(self, seconds: float) -> None:
        self.events.append(f"sleep {seconds:g}")
        self.now += seconds

    def workload(self) -> None:
        self.events.append("fn")
        self.now += ITERATION

    def runs(self) -> list[str]:
        """Events with consecutive workload calls collapsed to 'fn xN'."""
        out: list[str] = []
        for event in self.events:
            if event == "fn" and out and out[-1].startswith("fn x"):
                out[-1] = f"fn x{int(out[-1][4:]) + 1}"
            else:
                out.append("fn x1" if event == "fn" else event)
        return out


class Recording:
    """A monitor that logs window edges into the script, then delegates."""

    def __init__(self, inner, script: Script) -> None:
        self.inner, self.script = inner, script
        self.gpu_indices = inner.gpu_indices
        self.sync_with = None

    def begin_window(self, key, sync_execution=True):
        self.script.events.append(f"begin {key} sync={sync_execution}")
        self.inner.begin_window(key, sync_execution=sync_execution)

    def end_window(self, key, sync_execution=True):
        self.script.events.append(f"end {key}")
        return self.inner.end_window(key, sync_execution=sync_execution)


@pytest.fixture
def script(monkeypatch) -> Script:
    s = Script()
    monkeypatch.setattr(profile, "time", s.clock())
    return s


def test_measure_runs_one_trial_in_order(script):
    monitor = Recording(ZeusMonitor(gpu_indices=[0], sync_execution_with=None), script)
    result = profile.measure(script.workload, monitor, measurement_duration=0.25, cooldown_duration=3,
                             num_warmup_iterations=4, num_calibration_iterations=20)
    window = "__zeus_profile_run_trial"
    # warm-up + calibration, cooldown, warm-up, 16 measured iterations (0.25 s / (1/64) s).
    assert script.runs() == ["fn x24", "sleep 3", "fn x4", f"begin {window} sync=False", "fn x16", f"end {window}"]
    assert result.iterations == 16
    assert result.total_energy > 0  # the simulated GPU's counter moved
    assert result.energy_per_iter == pytest.approx(result.total_energy / 16)
    assert result.time_per_iter == pytest.approx(result.total_time / 16)
    assert 0 < result.temperature_before < 120 and 0 < result.temperature_after < 120


def test_warmup_settle_duration_sets_the_warmup_by_time(script):
    monitor = Recording(ZeusMonitor(gpu_indices=[0], sync_execution_with=None), script)
    profile.measure(script.workload, monitor, measurement_duration=0.05, cooldown_duration=0,
                    num_warmup_iterations=2, num_calibration_iterations=10, warmup_settle_duration=0.333)
    # Calibration still uses the count (2 + 10); the warm-up is ceil(0.333 * 64) = 22
    # iterations, the window ceil(0.05 * 64) = 4.
    assert script.runs() == ["fn x34", "begin __zeus_profile_run_trial sync=False", "fn x4",
                             "end __zeus_profile_run_trial"]
    script.events.clear()
    profile.measure(script.workload, monitor, 0.05, 0, num_warmup_iterations=2, num_calibration_iterations=10,
                    warmup_settle_duration=0)
    assert script.events.count("fn") == 12 + 1 + 4  # at least one warm-up iteration
    with pytest.raises(ValueError, match="warmup_settle_duration"):
        profile.measure(script.workload, monitor, 1, 1, warmup_settle_duration=-1)


@pytest.mark.parametrize("stop", [RuntimeError("the workload broke"), KeyboardInterrupt()])
def test_a_trial_that_raises_closes_its_window(script, stop):
    """The workload's exception comes out as itself, and the monitor can profile again."""
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    calls = 0

    def breaks_in_the_window():
        nonlocal calls
        calls += 1
        script.workload()
        if calls == 7:  # after calibration (1 + 4) and the warm-up (1): inside the window
            raise stop

    with pytest.raises(type(stop)):
        profile.measure(breaks_in_the_window, monitor, 0.25, 0, num_warmup_iterations=1,
                        num_calibration_iterations=4)
    assert not monitor.window_running("__zeus_profile_run_trial")
    result = profile.measure(script.workload, monitor, 0.25, 0, num_warmup_iterations=1,
                             num_calibration_iterations=4)
    assert result.iterations == 16


def test_bad_arguments_say_what_is_wrong(script):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    with pytest.raises(ValueError, match="measurement_duration must be a finite number"):
        profile.measure(script.workload, monitor, float("nan"), 1)
    with pytest.raises(ValueError, match="cooldown_duration"):
        profile.measure(script.workload, monitor, 1, -2)
    with pytest.raises(ValueError, match="num_calibration_iterations must be an integer >= 1"):
        profile.measure(script.workload, monitor, 1, 1, num_calibration_iterations=0)
    with pytest.raises(ValueError, match="num_trials"):
        profile.profile_cooldown_duration(script.workload, monitor, [1.0], num_trials=0)
    with pytest.raises(ValueError, match="at least one GPU"):
        with pytest.warns(RuntimeWarning):
            empty = ZeusMonitor(gpu_indices=[], sync_execution_with=None)
        profile.measure(script.workload, empty, 0.01, 0)


def replay_log(tmp_path, energies: list[float]):
    log = tmp_path / "trials.csv"
    rows = [f"0,w,0.5,{e}" for e in energies]
    log.write_text("start_time,window_name,elapsed_time,gpu0_energy\n" + "\n".join(rows) + "\n")
    return ReplayZeusMonitor(log_file=log, ignore_sync_execution=True, match_window_name=False)


def test_cooldown_sweep_statistics_and_validity(script, tmp_path):
    # 1 warm-up trial, then 3 trials for each of two cooldowns; 8 iterations per window (0.125 s).
    energies = [99.0, 10.0, 10.1, 9.9, 20.0, 30.0, 40.0]
    monitor = replay_log(tmp_path, energies)
    report = profile.profile_cooldown_duration(
        script.workload, monitor, cooldown_duration_search_range=[2.0, 5.0], measurement_duration=0.125,
        num_trials=3, num_warmup_trials=1, trial_stddev_threshold=0.5, num_warmup_iterations=0,
        num_calibration_iterations=10)
    assert report.sweep_param == ("cooldown_duration", [2.0, 5.0])
    assert report.fixed_param == ("measurement_duration", 0.125)
    first, second = report.entries
    assert [t.iterations for t in first.trials] == [8, 8, 8]
    assert first.energy_mean == pytest.approx(1.25)  # (10 + 10.1 + 9.9) / 3 / 8 iterations
    assert first.energy_std == pytest.approx(statistics.stdev([10 / 8, 10.1 / 8, 9.9 / 8]))
    assert first.is_valid and not second.is_valid
    assert second.energy_mean == pytest.approx(3.75) and second.energy_std == pytest.approx(1.25)
    assert first.cooldown_duration == 2.0 and second.cooldown_duration == 5.0
    assert first.avg_total_time == 0.5 and first.avg_total_energy == pytest.approx(10.0)
    # The warm-up trial sleeps not; each measured trial sleeps its cooldown.
    assert [e for e in script.events if e.startswith("sleep")] == ["sleep 2"] * 3 + ["sleep 5"] * 3
    text = str(report)
    assert text.splitlines()[0] == "Sweep cooldown_duration (fixed measurement_duration=0.1 s):"
    assert "[VALID]" in text.splitlines()[1] and "[INVALID]" in text.splitlines()[2]
    assert "mean=1.2500 J" in str(first) and str(first).startswith("measurement=0.1 s  cooldown=2.0 s")


def test_profile_parameters_runs_both_sweeps(script, tmp_path):
    # Measurement sweep: 1 warm-up + 2 values x 2 trials; cooldown sweep: 2 values x 2 trials, no warm-up.
    monitor = replay_log(tmp_path, [1.0] * 9)
    m_report, c_report = profile.profile_parameters(
        script.workload, monitor, measurement_duration_search_range=[0.0625, 0.25],
        cooldown_duration_search_range=[1.0, 4.0], num_trials=2, num_warmup_trials=1,
        num_warmup_iterations=3, num_calibration_iterations=10)
    assert [e.measurement_duration for e in m_report.entries] == [0.0625, 0.25]
    assert all(e.cooldown_duration == 4.0 for e in m_report.entries)  # the cooldown range's maximum
    assert [e.cooldown_duration for e in c_report.entries] == [1.0, 4.0]
    assert all(e.measurement_duration == 0.25 for e in c_report.entries)  # the measurement range's maximum
    assert [t.iterations for e in m_report.entries for t in e.trials] == [4, 4, 16, 16]
    assert all(e.is_valid and e.energy_std == 0 for e in m_report.entries + c_report.entries)
    assert not monitor._rows  # 1 + 4 + 4 windows: exactly the log
    # Calibrated once: warm-up + calibration (3 + 10), then the warm-up trial (no cooldown,
    # no warm-up, the longest window: 16) run back to back; then the trials' sleeps.
    assert script.runs()[:2] == ["fn x29", "sleep 4"]
    assert sum(1 for e in script.events if e.startswith("sleep")) == 8


def test_default_ranges_are_one_to_ten_seconds(script, tmp_path):
    monitor = replay_log(tmp_path, [1.0] * 10)
    report = profile.profile_measurement_duration(script.workload, monitor, [], cooldown_duration=0,
                                                  num_trials=1, num_warmup_trials=0, iteration_duration=1.0)
    assert report.sweep_param[1] == [float(s) for s in range(1, 11)]
    assert [t.iterations for e in report.entries for t in e.trials] == list(range(1, 11))
    assert math.isclose(report.entries[0].energy_std, 0.0)
