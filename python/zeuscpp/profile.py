"""Thermally stable energy profiling (upstream ``zeus.profile``).

A GPU's energy per iteration drifts with its temperature, so a stable
measurement repeats the same recipe every time: idle for a *cooldown*, warm
the workload up, then measure it for a fixed *measurement duration*::

    trial:  | cooldown (sleep) | warm-up iterations | measured iterations |
                                                    ^ window opens        ^ closes

:func:`measure` runs one trial. :func:`profile_measurement_duration` and
:func:`profile_cooldown_duration` sweep one of the two durations (the other
fixed), running ``num_trials`` trials per value, and mark a value valid when
the sample standard deviation of energy per iteration over its trials is
below ``trial_stddev_threshold`` (J). :func:`profile_parameters` runs both
sweeps, each with the other duration at the maximum of its range.

The number of measured iterations is the measurement duration divided by
the iteration time calibrated beforehand (rounded up, at least 1), so every
trial of a value runs the same iterations. Distributed: give each rank a
``ZeusMonitor(gpu_indices=[local_rank])``; trial energy is summed over ranks,
time is the slowest rank's, and temperatures are averaged.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import statistics
import time
from typing import Any, Callable, Literal, Sequence

from zeuscpp.device import get_gpus
from zeuscpp.utils.framework import all_reduce, get_rank, get_world_size, sync_execution

__all__ = [
    "TrialResult",
    "SweepResult",
    "SweepReport",
    "measure",
    "profile_parameters",
    "profile_measurement_duration",
    "profile_cooldown_duration",
]

logger = logging.getLogger(__name__)

# Seconds swept when no range is given (upstream's default): 1, 2, ..., 10.
_DEFAULT_RANGE = [float(s) for s in range(1, 11)]
_WINDOW = "__zeus_profile_run_trial"


@dataclasses.dataclass
class TrialResult:
    """One trial's measurement.

    Attributes:
        energy_per_iter: J per measured iteration (all ranks' GPUs).
        time_per_iter: s per measured iteration.
        total_energy: J over the measured iterations.
        total_time: s the measured iterations took (the slowest rank's).
        iterations: How many iterations were measured.
        temperature_before: Mean GPU temperature (°C) just before the window.
        temperature_after: Mean GPU temperature (°C) just after it.
    """

    energy_per_iter: float
    time_per_iter: float
    total_energy: float
    total_time: float
    iterations: int
    temperature_before: float
    temperature_after: float


@dataclasses.dataclass
class SweepResult:
    """The trials of one swept value and their statistics.

    Attributes:
        measurement_duration: s measured per trial.
        cooldown_duration: s idle before each trial.
        trials: Each trial's result.
        energy_mean: Mean energy per iteration over the trials (J).
        energy_std: Sample standard deviation of it (J; 0 for one trial).
        avg_temperature_before: Mean of the trials' temperature_before (°C).
        avg_temperature_after: Mean of the trials' temperature_after (°C).
        avg_total_time: Mean total_time (s).
        avg_total_energy: Mean total_energy (J).
        is_valid: ``energy_std < trial_stddev_threshold``.
    """

    measurement_duration: float
    cooldown_duration: float
    trials: list[TrialResult]
    energy_mean: float
    energy_std: float
    avg_temperature_before: float
    avg_temperature_after: float
    avg_total_time: float
    avg_total_energy: float
    is_valid: bool

    def _stats(self) -> str:
        return (
            f"mean={self.energy_mean:.4f} J  std={self.energy_std:.4f} J  "
            f"temp_before={self.avg_temperature_before:.1f} °C  "
            f"temp_after={self.avg_temperature_after:.1f} °C  "
            f"[{'VALID' if self.is_valid else 'INVALID'}]"
        )

    def __str__(self) -> str:
        """One line: both durations, the statistics and VALID/INVALID."""
        return f"measurement={self.measurement_duration:.1f} s  cooldown={self.cooldown_duration:.1f} s  " + self._stats()


@dataclasses.dataclass
class SweepReport:
    """A whole sweep: which duration was swept over which values, the other one, and each value's result.

    Attributes:
        sweep_param: ``(name, values)`` of the swept duration.
        fixed_param: ``(name, value)`` of the fixed one.
        entries: One SweepResult per swept value, in order.
    """

    sweep_param: tuple[str, list[float]]
    fixed_param: tuple[str, float]
    entries: list[SweepResult]

    def __str__(self) -> str:
        """A title line, then one line per swept value."""
        swept, _ = self.sweep_param
        fixed, fixed_value = self.fixed_param
        labels = [f"{swept}={getattr(e, swept):.1f} s" for e in self.entries]
        width = max((len(label) for label in labels), default=0)
        lines = [f"Sweep {swept} (fixed {fixed}={fixed_value:.1f} s):"]
        lines += [f"  {label:<{width}}  {e._stats()}" for label, e in zip(labels, self.entries)]
        return "\n".join(lines)


def _check_duration(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def _check_count(value: int, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return value


def _search_range(values: Sequence[float] | None, what: str) -> list[float]:
    if not values:  # None or empty: the default, as upstream
        return list(_DEFAULT_RANGE)
    return [_check_duration(v, f"every value of {what}") for v in values]


def _sync(monitor: Any) -> None:
    sync_execution(monitor.gpu_indices, sync_with=getattr(monitor, "sync_with", "torch"))


def _calibrate(fn: Callable[[], Any], monitor: Any, warmup: int, iterations: int) -> float:
    """Seconds per iteration after warm-up (the slowest rank's)."""
    for _ in range(warmup):
        fn()
    _sync(monitor)
    start = time.monotonic()
    for _ in range(iterations):
        fn()
    _sync(monitor)
    [seconds] = all_reduce([(time.monotonic() - start) / iterations], "max")
    logger.info("calibrated iteration time: %.3f ms", seconds * 1000)
    return seconds


def _mean_temperature(monitor: Any) -> float:
    if not monitor.gpu_indices:
        raise ValueError("thermally stable profiling needs a monitor that measures at least one GPU")
    gpus = get_gpus()
    return sum(gpus.get_gpu_temperature(i) for i in monitor.gpu_indices) / len(monitor.gpu_indices)


def _close_window(monitor: Any) -> None:
    """End the trial's window after the workload raised, without masking that error.

    ``cancel=True`` drops the window (ZeusMonitor's and ReplayZeusMonitor's
    signature); a monitor without the argument ends it plainly.
    """
    try:
        try:
            monitor.end_window(_WINDOW, sync_execution=False, cancel=True)
        except TypeError:
            monitor.end_window(_WINDOW, sync_execution=False)
    except Exception:  # the workload's exception is the one to report
        logger.warning("could not end the profiling window after the workload failed", exc_info=True)


def _trial(fn: Callable[[], Any], monitor: Any, cooldown: float, duration: float, warmup: int, per_iter: float) -> TrialResult:
    iterations = max(1, math.ceil(duration / per_iter)) if per_iter > 0 else 1
    if cooldown > 0:
        time.sleep(cooldown)
    for _ in range(warmup):
        fn()
    _sync(monitor)
    before = _mean_temperature(monitor)
    monitor.begin_window(_WINDOW, sync_execution=False)  # synced just above
    try:
        for _ in range(iterations):
            fn()
    except BaseException:
        _close_window(monitor)  # so the monitor can profile again
        raise
    window = monitor.end_window(_WINDOW)
    after = _mean_temperature(monitor)
    energy, before_sum, after_sum = all_reduce([window.total_energy, before, after], "sum")
    [elapsed] = all_reduce([window.time], "max")
    ranks = get_world_size()
    return TrialResult(
        energy_per_iter=energy / iterations,
        time_per_iter=elapsed / iterations,
        total_energy=energy,
        total_time=elapsed,
        iterations=iterations,
        temperature_before=before_sum / ranks,
        temperature_after=after_sum / ranks,
    )


def _summarize(duration: float, cooldown: float, trials: list[TrialResult], threshold: float) -> SweepResult:
    energies = [t.energy_per_iter for t in trials]
    n = len(trials)
    std = statistics.stdev(energies) if n > 1 else 0.0
    return SweepResult(
        measurement_duration=duration,
        cooldown_duration=cooldown,
        trials=trials,
        energy_mean=statistics.mean(energies),
        energy_std=std,
        avg_temperature_before=sum(t.temperature_before for t in trials) / n,
        avg_temperature_after=sum(t.temperature_after for t in trials) / n,
        avg_total_time=sum(t.total_time for t in trials) / n,
        avg_total_energy=sum(t.total_energy for t in trials) / n,
        is_valid=std < threshold,
    )


def _single_sweep(fn: Callable[[], Any], monitor: Any, swept: Literal["measurement_duration", "cooldown_duration"],
                  values: list[float], fixed: str,
                  fixed_value: float, num_trials: int, num_warmup_trials: int, threshold: float, warmup: int,
                  calibration: int, iteration_duration: float | None) -> SweepReport:
    """What profile_measurement_duration and profile_cooldown_duration share once their ranges are read."""
    _check_common(num_trials, num_warmup_trials, threshold, warmup, calibration)
    iteration_duration = _known_or_calibrated(iteration_duration, fn, monitor, warmup, calibration)
    if get_rank() == 0:
        logger.info("sweeping %s with %s %.1f s", swept, fixed, fixed_value)
    return _sweep(fn, monitor, swept, values, fixed_value, num_trials, num_warmup_trials, threshold, warmup,
                  iteration_duration)


def _known_or_calibrated(iteration_duration: float | None, fn: Callable[[], Any], monitor: Any, warmup: int,
                         iterations: int) -> float:
    """The caller's iteration time (checked), else one calibrated now."""
    if iteration_duration is None:
        return _calibrate(fn, monitor, warmup, iterations)
    return _check_duration(iteration_duration, "iteration_duration")


def _sweep(
    fn: Callable[[], Any],
    monitor: Any,
    swept: Literal["measurement_duration", "cooldown_duration"],
    values: list[float],
    fixed: float,
    num_trials: int,
    num_warmup_trials: int,
    threshold: float,
    warmup: int,
    per_iter: float,
) -> SweepReport:
    cooldown_sweep = swept == "cooldown_duration"
    lead = get_rank() == 0
    # Throwaway trials heat the GPU up: no cooldown, no warm-up, the longest window.
    for k in range(num_warmup_trials):
        _trial(fn, monitor, 0.0, fixed if cooldown_sweep else max(values), 0, per_iter)
        if lead:
            logger.info("warm-up trial %d/%d done", k + 1, num_warmup_trials)
    entries = []
    for value in values:
        cooldown, duration = (value, fixed) if cooldown_sweep else (fixed, value)
        if lead:
            logger.info("%s=%.1f s: %d trials", swept, value, num_trials)
        trials = [_trial(fn, monitor, cooldown, duration, warmup, per_iter) for _ in range(num_trials)]
        entries.append(_summarize(duration, cooldown, trials, threshold))
    other = "measurement_duration" if cooldown_sweep else "cooldown_duration"
    report = SweepReport(sweep_param=(swept, values), fixed_param=(other, fixed), entries=entries)
    if lead:
        logger.info("%s", report)
    return report


def _check_common(num_trials: int, num_warmup_trials: int, threshold: float, warmup: int, calibration: int) -> None:
    _check_count(num_trials, "num_trials", 1)
    _check_count(num_warmup_trials, "num_warmup_trials", 0)
    _check_count(warmup, "num_warmup_iterations", 0)
    _check_count(calibration, "num_calibration_iterations", 1)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold >= 0:
        raise ValueError(f"trial_stddev_threshold must be a number of J >= 0, got {threshold!r}")


def profile_measurement_duration(
    target_function: Callable[[], Any],
    zeus_monitor: Any,
    measurement_duration_search_range: list[float] | None = None,
    cooldown_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: float | None = None,
) -> SweepReport:
    """Sweep the measurement duration with the cooldown fixed.

    Args:
        target_function: One iteration of the workload (called with no arguments).
        zeus_monitor: A ZeusMonitor measuring the GPUs the workload runs on.
        measurement_duration_search_range: Seconds to try. None or empty: 1, 2, ..., 10.
        cooldown_duration: Seconds idle before each trial.
        num_trials: Trials per value.
        num_warmup_trials: Throwaway trials first (no cooldown, no warm-up, the
            longest duration) to bring the GPU to temperature.
        trial_stddev_threshold: A value is valid when the standard deviation of
            energy per iteration over its trials is below this (J).
        num_warmup_iterations: Iterations before each measured window.
        num_calibration_iterations: Iterations timed to calibrate the iteration time.
        iteration_duration: Seconds per iteration, if already known (skips calibration).

    Raises:
        ValueError: a negative or non-finite duration, a count below its minimum,
            or a monitor without GPUs.
    """
    values = _search_range(measurement_duration_search_range, "measurement_duration_search_range")
    cooldown = _check_duration(cooldown_duration, "cooldown_duration")
    return _single_sweep(target_function, zeus_monitor, "measurement_duration", values, "cooldown_duration",
                         cooldown, num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
                         num_calibration_iterations, iteration_duration)


def profile_cooldown_duration(
    target_function: Callable[[], Any],
    zeus_monitor: Any,
    cooldown_duration_search_range: list[float] | None = None,
    measurement_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: float | None = None,
) -> SweepReport:
    """Sweep the cooldown duration with the measurement duration fixed.

    Args:
        target_function: One iteration of the workload (called with no arguments).
        zeus_monitor: A ZeusMonitor measuring the GPUs the workload runs on.
        cooldown_duration_search_range: Seconds to try. None or empty: 1, 2, ..., 10.
        measurement_duration: Seconds measured per trial.
        num_trials: Trials per value.
        num_warmup_trials: Throwaway trials first (no cooldown, no warm-up).
        trial_stddev_threshold: A value is valid when the standard deviation of
            energy per iteration over its trials is below this (J).
        num_warmup_iterations: Iterations before each measured window.
        num_calibration_iterations: Iterations timed to calibrate the iteration time.
        iteration_duration: Seconds per iteration, if already known (skips calibration).

    Raises:
        ValueError: as :func:`profile_measurement_duration`.
    """
    values = _search_range(cooldown_duration_search_range, "cooldown_duration_search_range")
    duration = _check_duration(measurement_duration, "measurement_duration")
    return _single_sweep(target_function, zeus_monitor, "cooldown_duration", values, "measurement_duration",
                         duration, num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
                         num_calibration_iterations, iteration_duration)


def profile_parameters(
    target_function: Callable[[], Any],
    zeus_monitor: Any,
    measurement_duration_search_range: list[float] | None = None,
    cooldown_duration_search_range: list[float] | None = None,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
) -> tuple[SweepReport, SweepReport]:
    """Sweep the measurement duration, then the cooldown duration.

    The iteration time is calibrated once. The first sweep fixes the cooldown
    at the largest value of its range and runs the warm-up trials; the second
    fixes the measurement duration at the largest of its range and runs none.

    Args:
        target_function: One iteration of the workload (called with no arguments).
        zeus_monitor: A ZeusMonitor measuring the GPUs the workload runs on.
        measurement_duration_search_range: Seconds to try. None or empty: 1, 2, ..., 10.
        cooldown_duration_search_range: Seconds to try. None or empty: 1, 2, ..., 10.
        num_trials: Trials per value.
        num_warmup_trials: Throwaway trials before the first sweep.
        trial_stddev_threshold: Validity threshold on the standard deviation (J).
        num_warmup_iterations: Iterations before each measured window.
        num_calibration_iterations: Iterations timed to calibrate the iteration time.

    Returns:
        ``(measurement_duration report, cooldown_duration report)``.

    Raises:
        ValueError: as :func:`profile_measurement_duration`.
    """
    measurements = _search_range(measurement_duration_search_range, "measurement_duration_search_range")
    cooldowns = _search_range(cooldown_duration_search_range, "cooldown_duration_search_range")
    _check_common(num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
                  num_calibration_iterations)
    per_iter = _calibrate(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    measurement_report = profile_measurement_duration(
        target_function, zeus_monitor, measurements, max(cooldowns), num_trials, num_warmup_trials,
        trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations, per_iter)
    cooldown_report = profile_cooldown_duration(
        target_function, zeus_monitor, cooldowns, max(measurements), num_trials, 0,
        trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations, per_iter)
    return measurement_report, cooldown_report


def measure(
    target_function: Callable[[], Any],
    zeus_monitor: Any,
    measurement_duration: float,
    cooldown_duration: float,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    warmup_settle_duration: float | None = None,
) -> TrialResult:
    """Run one trial: calibrate, sleep ``cooldown_duration``, warm up, measure.

    Args:
        target_function: One iteration of the workload (called with no arguments).
        zeus_monitor: A ZeusMonitor measuring the GPUs the workload runs on.
        measurement_duration: Seconds to measure (whole iterations, at least one).
        cooldown_duration: Seconds idle before the warm-up.
        num_warmup_iterations: Iterations before calibration, and before the
            window unless warmup_settle_duration is given.
        num_calibration_iterations: Iterations timed to calibrate the iteration time.
        warmup_settle_duration: Seconds of warm-up before the window instead of
            a count: as many iterations as fit (rounded up, at least one), so the
            GPU reaches the same thermal state whatever the iteration time.

    Raises:
        ValueError: a negative or non-finite duration, a count below its
            minimum, or a monitor without GPUs.
    """
    duration = _check_duration(measurement_duration, "measurement_duration")
    cooldown = _check_duration(cooldown_duration, "cooldown_duration")
    _check_count(num_warmup_iterations, "num_warmup_iterations", 0)
    _check_count(num_calibration_iterations, "num_calibration_iterations", 1)
    if warmup_settle_duration is not None:
        _check_duration(warmup_settle_duration, "warmup_settle_duration")
    per_iter = _calibrate(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    warmup = num_warmup_iterations
    if warmup_settle_duration is not None:
        warmup = max(1, math.ceil(warmup_settle_duration / per_iter)) if per_iter > 0 else 1
    return _trial(target_function, zeus_monitor, cooldown, duration, warmup, per_iter)
