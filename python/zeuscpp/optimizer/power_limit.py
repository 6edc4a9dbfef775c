"""The just-in-time GPU power-limit optimizer (upstream ``zeus.optimizer.power_limit``).

:class:`GlobalPowerLimitOptimizer` profiles each candidate power limit for a
few training steps, then keeps the limit an :class:`OptimumSelector` picks.
The state machine, the profile file and the built-in selectors are the C++
library's; a Python subclass of :class:`OptimumSelector` works as a custom
selector. GPU settings the optimizer changes are restored when it is freed and
on every exit path of the process (return, exception, ``sys.exit``, SIGINT,
SIGTERM).

:class:`ChasePowerLimitOptimizer` (zeuscpp extension, docs/chase.md) profiles
the same way, then re-picks the limit at every period boundary from a grid
signal (carbon intensity or electricity price) and its forecast.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime
import os
from typing import Any, Callable, ClassVar, Literal, Sequence

from zeuscpp import _signals
from zeuscpp._core import optimizer as _optimizer
from zeuscpp.callback import Callback
from zeuscpp.monitor.energy import ZeusMonitor
from zeuscpp.utils.framework import default_reducer

__all__ = [
    "OptimumSelector",
    "Energy",
    "Time",
    "ZeusCost",
    "MaxSlowdownConstraint",
    "PowerLimitMeasurement",
    "OptimizerState",
    "Ready",
    "Warmup",
    "Profiling",
    "Done",
    "GlobalPowerLimitOptimizer",
    "HFGlobalPowerLimitOptimizer",
    "ChaseDecision",
    "ChasePowerLimitOptimizer",
    "HFChasePowerLimitOptimizer",
]

PowerLimitMeasurement = _optimizer.PowerLimitMeasurement


def _watts(milliwatts: int) -> int | float:
    """W from mW: an int when whole, as the profile file writes limits."""
    return milliwatts // 1000 if milliwatts % 1000 == 0 else milliwatts / 1000


class OptimizerState:
    """Base of the optimizer's states (``GlobalPowerLimitOptimizer.state``).

    The states are upstream's: :class:`Ready`, :class:`Warmup`,
    :class:`Profiling` and :class:`Done`, with upstream's fields (power limits
    in mW), so ``isinstance(plo.state, Done)`` works as it does there. Each also
    has ``phase`` (``"ready"``, ``"warmup"``, ``"profiling"``, ``"done"``),
    ``power_limit`` (the limit it concerns, in W) and ``steps`` (steps left;
    0 in Done).
    """

    phase: ClassVar[str]

    @property
    def power_limit(self) -> int | float:
        """The power limit (W) this state concerns."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class Ready(OptimizerState):
    """Waiting to profile ``next_power_limit`` (mW); warm-up starts on the ``steps``-th step.

    The first state when no profile file was loaded; an epoch that ends during
    warm-up or profiling also returns here (steps=1) to retry that limit.
    """

    next_power_limit: int
    steps: int
    phase: ClassVar[str] = "ready"

    @property
    def power_limit(self) -> int | float:
        """The limit to profile next, in W."""
        return _watts(self.next_power_limit)


@dataclasses.dataclass(frozen=True)
class Warmup(OptimizerState):
    """Warming up at ``current_power_limit`` (mW); profiling starts after ``steps`` more steps."""

    current_power_limit: int
    steps: int
    phase: ClassVar[str] = "warmup"

    @property
    def power_limit(self) -> int | float:
        """The limit being warmed up, in W."""
        return _watts(self.current_power_limit)


@dataclasses.dataclass(frozen=True)
class Profiling(OptimizerState):
    """Measuring ``current_power_limit`` (mW); the window ends after ``steps`` more steps."""

    current_power_limit: int
    steps: int
    phase: ClassVar[str] = "profiling"

    @property
    def power_limit(self) -> int | float:
        """The limit being measured, in W."""
        return _watts(self.current_power_limit)


@dataclasses.dataclass(frozen=True)
class Done(OptimizerState):
    """Profiling is over (or a profile file was loaded); ``optimal_power_limit`` (mW) is set."""

    optimal_power_limit: int
    phase: ClassVar[str] = "done"

    @property
    def power_limit(self) -> int | float:
        """The chosen limit, in W."""
        return _watts(self.optimal_power_limit)

    @property
    def steps(self) -> int:
        """Steps left: always 0."""
        return 0


def _state_from_core(core: Any) -> OptimizerState:
    milliwatts = int(round(core.power_limit * 1000))
    if core.phase == "ready":
        return Ready(next_power_limit=milliwatts, steps=core.steps)
    if core.phase == "warmup":
        return Warmup(current_power_limit=milliwatts, steps=core.steps)
    if core.phase == "profiling":
        return Profiling(current_power_limit=milliwatts, steps=core.steps)
    return Done(optimal_power_limit=milliwatts)


class OptimumSelector(abc.ABC):
    """Base class of optimum power-limit selectors; subclass it for your own.

    ``select`` gets the measurements (``power_limit`` in W, ``energy`` in J,
    ``time`` in s) and returns the power_limit (W) of one of them.
    """

    @abc.abstractmethod
    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        """Select the optimal power limit (W) from measurements."""


class _LibrarySelector(OptimumSelector):
    """A selector implemented in the C++ library (used directly by the optimizer)."""

    _core_selector: Any

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        """Select the optimal power limit (W) from measurements."""
        return self._core_selector.select(measurements)

    def __repr__(self) -> str:
        """E.g. ``ZeusCost(zeus-cost(eta=0.5))``."""
        return f"{type(self).__name__}({self._core_selector.name()})"


class Energy(_LibrarySelector):
    """Selects the power limit that minimizes energy (ties: the higher limit)."""

    def __init__(self) -> None:
        """Create the selector."""
        self._core_selector = _optimizer.EnergySelector()


class Time(_LibrarySelector):
    """Selects the power limit that minimizes time (ties: the higher limit).

    Timing noise may make this pick a limit below the maximum; that is measured truth.
    """

    def __init__(self) -> None:
        """Create the selector."""
        self._core_selector = _optimizer.TimeSelector()


class ZeusCost(_LibrarySelector):
    r"""Selects the power limit that minimizes the Zeus cost $\eta E + (1-\eta) \cdot MaxPower \cdot T$.

    MaxPower is the largest measured limit times ``world_size``.

    Args:
        eta_knob: $0 \le \eta \le 1$; 0 optimizes time only, 1 energy only.
        world_size: The number of GPUs whose energy the measurements sum.

    Raises:
        ZeusInvalidArgumentError: eta_knob outside [0, 1] or world_size < 1 (a ``ValueError``).
    """

    def __init__(self, eta_knob: float, world_size: int = 1) -> None:
        """Create the selector (see the class docstring)."""
        self._core_selector = _optimizer.ZeusCostSelector(eta_knob, world_size)
        self.eta_knob = eta_knob
        self.world_size = world_size


class MaxSlowdownConstraint(_LibrarySelector):
    """Selects the lowest power limit whose time is at most ``factor`` x the time at the maximum limit.

    Args:
        factor: The allowed slowdown, at least 1.0.

    Raises:
        ZeusInvalidArgumentError: factor < 1 (a ``ValueError``).
    """

    def __init__(self, factor: float) -> None:
        """Create the selector (see the class docstring)."""
        self._core_selector = _optimizer.MaxSlowdownSelector(factor)
        self.factor = factor


class GlobalPowerLimitOptimizer(_optimizer.GlobalPowerLimitOptimizer, Callback):
    """Finds the power limit that best trades time for energy, during training.

    Call ``on_step_begin()`` before every training step and ``on_epoch_end()``
    after every epoch. It waits ``wait_steps`` steps, then for each candidate
    limit (maximum down to minimum in ``pl_step`` W steps) runs ``warmup_steps``
    steps and measures ``profile_steps`` steps; then it sets the limit the
    selector picks. An epoch that ends mid-profile retries that limit next epoch.

    Distributed training: when ``torch.distributed`` is initialized, measurements
    are all-reduced over ranks (energy summed, time the slowest rank's) so every
    rank picks the same limit. Monitor one GPU per rank
    (``ZeusMonitor(gpu_indices=[local_rank])``).

    ``state`` is one of :class:`Ready`, :class:`Warmup`, :class:`Profiling`,
    :class:`Done` (upstream's state classes, limits in mW).

    Args:
        monitor: The ZeusMonitor measuring the GPUs whose limit is set, or any
            object with its methods (``begin_window``, ``end_window``,
            ``gpu_indices``) such as :class:`zeuscpp.utils.testing.ReplayZeusMonitor`;
            limits are then set on this process's GPUs with those indices.
        optimum_selector: An OptimumSelector. None: ``ZeusCost(0.5)`` with
            world_size the number of GPUs measured over all ranks.
        wait_steps: Steps before profiling starts.
        warmup_steps: Unmeasured steps after each limit change.
        profile_steps: Measured steps per limit (> 0).
        pl_step: Distance between candidate limits, in W (> 0).
        profile_path: JSON profile. If the file exists, its optimum is applied at
            once; otherwise the profile is written there when profiling ends.
        dry_run: Never change a GPU setting; measure at the current limit and
            report what would be chosen (zeuscpp extension).
        observer_mode: Profile, then stay at the maximum limit and only report
            the choice (zeuscpp extension).
        reducer: An object with ``all_reduce_sum``, ``all_reduce_max``, ``rank``
            and ``world_size``. None: torch.distributed when initialized, else one
            process.

    Raises:
        ZeusInvalidArgumentError: bad parameters or a bad profile file (``ValueError``).
        ZeusHeterogeneousError: monitored GPUs that differ (``ValueError``).
        ZeusNoPermissionError: the process may not change GPU settings.
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        optimum_selector: OptimumSelector | None = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: float = 25,
        profile_path: str | os.PathLike[str] | None = None,
        *,
        dry_run: bool = False,
        observer_mode: bool = False,
        reducer: Any | None = None,
    ) -> None:
        """Set up profiling (see the class docstring for the arguments)."""
        if reducer is None:
            reducer = default_reducer()
        _optimizer.GlobalPowerLimitOptimizer.__init__(
            self,
            monitor,
            optimum_selector,
            wait_steps,
            warmup_steps,
            profile_steps,
            pl_step,
            profile_path,
            dry_run,
            observer_mode,
            reducer,
        )
        _signals.hand_signals_back_to_python()
        self.monitor = monitor
        self.optimum_selector = optimum_selector
        self.reducer = reducer
        self.wait_steps = wait_steps
        self.warmup_steps = warmup_steps
        self.profile_steps = profile_steps
        self.pl_step = int(round(pl_step * 1000))  # mW, as upstream keeps it
        self.profile_path = profile_path

    @property
    def state(self) -> OptimizerState:
        """The current state: a :class:`Ready`, :class:`Warmup`, :class:`Profiling` or :class:`Done`."""
        return _state_from_core(_optimizer.GlobalPowerLimitOptimizer.state.__get__(self))


try:  # Subclass Hugging Face's TrainerCallback when transformers is there.
    from transformers.trainer_callback import TrainerCallback as _HFBase  # type: ignore

    _transformers_available = True
except ImportError:  # depends on the environment
    _HFBase = object
    _transformers_available = False


class HFGlobalPowerLimitOptimizer(_HFBase):  # type: ignore[misc, valid-type]
    """:class:`GlobalPowerLimitOptimizer` as a Hugging Face ``TrainerCallback``.

    Pass it in ``Trainer(callbacks=[...])``; ``on_step_begin`` and
    ``on_epoch_end`` forward to the wrapped optimizer (``.optimizer``). Same
    arguments as GlobalPowerLimitOptimizer.

    Raises:
        ImportError: ``transformers`` is not installed (as in the Python Zeus):
            a callback a Trainer cannot use is never built.
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        optimum_selector: OptimumSelector | None = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: float = 25,
        profile_path: str | os.PathLike[str] | None = None,
        *,
        dry_run: bool = False,
        observer_mode: bool = False,
        reducer: Any | None = None,
    ) -> None:
        """Create the wrapped optimizer (see GlobalPowerLimitOptimizer)."""
        if not _transformers_available:
            raise ImportError(
                "HFGlobalPowerLimitOptimizer needs the transformers package, which is not installed; "
                "install transformers, or call GlobalPowerLimitOptimizer's on_step_begin() and "
                "on_epoch_end() from your own training loop"
            )
        self.optimizer = GlobalPowerLimitOptimizer(
            monitor,
            optimum_selector,
            wait_steps,
            warmup_steps,
            profile_steps,
            pl_step,
            profile_path,
            dry_run=dry_run,
            observer_mode=observer_mode,
            reducer=reducer,
        )

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: forwards to the optimizer's on_step_begin."""
        self.optimizer.on_step_begin()

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: forwards to the optimizer's on_epoch_end."""
        self.optimizer.on_epoch_end()


@dataclasses.dataclass(frozen=True)
class ChaseDecision:
    """One period's decision of :class:`ChasePowerLimitOptimizer`.

    Attributes:
        period_start: Start of the period (UTC, timezone-aware).
        signal_seen: The signal over the last completed period (g/kWh or price per kWh).
        forecast: The forecast for this period.
        eta_eff: The Zeus eta the forecast amounts to (NaN for a price so negative
            that no eta matches; the paper's cost is then minimised directly).
        power_limit: The limit chosen, in W.
    """

    period_start: datetime.datetime
    signal_seen: float
    forecast: float
    eta_eff: float
    power_limit: int | float

    @property
    def period_start_utc(self) -> int:
        """The period's start in Unix seconds."""
        return int(self.period_start.timestamp())


def _signal_core(signal: Any) -> Any:
    """A provider of zeuscpp.monitor.carbon / price stands for its library object."""
    core = getattr(signal, "_core", None)
    return core if core is not None and not callable(signal) else signal


class ChasePowerLimitOptimizer(_optimizer.ChasePowerLimitOptimizer, Callback):
    r"""Carbon- or price-aware power limits (Chase): Zeus's profiling, then a limit per period.

    It profiles every candidate limit as :class:`GlobalPowerLimitOptimizer` does
    (the same arguments; a saved ``profile_path`` skips profiling). Then, at once
    and at every UTC multiple of ``period_s``, it reads the grid signal of the
    last completed period, forecasts this period's and sets the limit that
    minimises $[\eta P \hat S + (1-\eta) \cdot MaxPower \cdot S_{max}] / throughput$
    over the stored profile (no re-profiling). Each decision is logged and kept
    in :attr:`decisions`. A signal that fails keeps the last limit, warns once
    per outage (a ``RuntimeWarning`` and a log line) and is retried at the next
    boundary. GPU settings are restored on every exit path. See docs/chase.md.

    Distributed training: with ``torch.distributed`` initialized (or a
    ``reducer``), every rank must call it the same number of times; at each
    check the ranks agree on the period (one all-reduce), rank 0 alone reads
    the signal and decides, and every rank applies rank 0's limit at the same step.

    Args:
        monitor: The ZeusMonitor (or a monitor-like object) of the GPUs whose limit is set.
        signal: Where the signal comes from: a provider of
            :mod:`zeuscpp.monitor.carbon` or :mod:`zeuscpp.monitor.price`
            (hourly values, averaged over each period); a path to a signal CSV
            (``zeus simulate chase``'s formats; ``unit`` when the header has none);
            or a callable ``signal(start_utc, period_s) -> float`` giving the mean
            over that period (``kind`` says what it is); an exception it raises
            is a failed period.
        eta: Carbon (or cost) against time, in [0, 1].
        period_s: Decision period in seconds (boundaries at UTC multiples).
        forecaster: ``"persistence"``, ``"linear"`` or ``"svr"`` (fitted on the
            trailing ``history_s`` at the first decision).
        unit: The CSV's unit (``"g/kWh"``, ``"kg/kWh"``, ``"GBP/kWh"``, ...).
        kind: A callable's signal: ``"carbon"`` or ``"price"``.
        history_s: Forecaster fit and normaliser window (s).
        signal_max: The normaliser $S_{max}$; None: the maximum over the history.
        refit_periods: Refit the forecaster on the trailing history every this
            many periods (0: fit once, at the first decision; the normaliser stays).
        world_size: GPUs of the job for MaxPower; None: the monitored GPUs summed over ranks.
        check_steps: Look at the clock every this many steps (across ranks each
            look is one all-reduce; a boundary is seen up to ``check_steps - 1`` steps late).
        clock: Unix seconds now (a callable); None: the system clock. For tests
            and replays.
        wait_steps, warmup_steps, profile_steps, pl_step, profile_path, dry_run,
            observer_mode, reducer: As for :class:`GlobalPowerLimitOptimizer`.

    Raises:
        ZeusInvalidArgumentError: bad parameters, a bad signal file, an unknown
            forecaster (``ValueError``).
        ZeusNotSupportedError: ``"svr"`` in a build without libsvm.
        ZeusNoPermissionError: the process may not change GPU settings.
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        signal: Any,
        eta: float = 0.25,
        period_s: int = 3600,
        forecaster: Literal["persistence", "linear", "svr"] = "persistence",
        *,
        unit: str | None = None,
        kind: Literal["carbon", "price"] | None = None,
        history_s: int = 86400,
        signal_max: float | None = None,
        refit_periods: int = 0,
        world_size: int | None = None,
        check_steps: int = 1,
        clock: Callable[[], float] | None = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: float = 25,
        profile_path: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
        observer_mode: bool = False,
        reducer: Any | None = None,
    ) -> None:
        """Set up profiling and the controller (see the class docstring for the arguments)."""
        if reducer is None:
            reducer = default_reducer()
        _optimizer.ChasePowerLimitOptimizer.__init__(
            self,
            monitor,
            _signal_core(signal),
            unit,
            kind,
            eta,
            period_s,
            history_s,
            signal_max,
            forecaster,
            refit_periods,
            0 if world_size is None else world_size,
            check_steps,
            clock,
            wait_steps,
            warmup_steps,
            profile_steps,
            pl_step,
            profile_path,
            dry_run,
            observer_mode,
            reducer,
        )
        _signals.hand_signals_back_to_python()
        self.monitor = monitor
        self.signal = signal
        self.reducer = reducer
        self.eta = eta
        self.period_s = period_s
        self.profile_path = profile_path

    @property
    def state(self) -> OptimizerState:
        """The profiling state: a :class:`Ready`, :class:`Warmup`, :class:`Profiling` or :class:`Done`."""
        phase, power_limit, steps = self._phase
        return _state_from_core(_CoreState(phase, power_limit, steps))

    @property
    def decisions(self) -> list[ChaseDecision]:
        """Every decision so far, oldest first (identical on every rank)."""
        return [
            ChaseDecision(
                period_start=datetime.datetime.fromtimestamp(start, tz=datetime.timezone.utc),
                signal_seen=seen,
                forecast=forecast,
                eta_eff=eta_eff,
                power_limit=limit,
            )
            for start, seen, forecast, eta_eff, limit in self._decisions
        ]


@dataclasses.dataclass(frozen=True)
class _CoreState:
    phase: str
    power_limit: int | float
    steps: int


class HFChasePowerLimitOptimizer(_HFBase):  # type: ignore[misc, valid-type]
    """:class:`ChasePowerLimitOptimizer` as a Hugging Face ``TrainerCallback``.

    Pass it in ``Trainer(callbacks=[...])``; ``on_step_begin`` and
    ``on_epoch_end`` forward to the wrapped optimizer (``.optimizer``). Same
    arguments as ChasePowerLimitOptimizer.

    Raises:
        ImportError: ``transformers`` is not installed (as HFGlobalPowerLimitOptimizer).
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        signal: Any,
        eta: float = 0.25,
        period_s: int = 3600,
        forecaster: Literal["persistence", "linear", "svr"] = "persistence",
        *,
        unit: str | None = None,
        kind: Literal["carbon", "price"] | None = None,
        history_s: int = 86400,
        signal_max: float | None = None,
        refit_periods: int = 0,
        world_size: int | None = None,
        check_steps: int = 1,
        clock: Callable[[], float] | None = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: float = 25,
        profile_path: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
        observer_mode: bool = False,
        reducer: Any | None = None,
    ) -> None:
        """Create the wrapped optimizer (see ChasePowerLimitOptimizer)."""
        if not _transformers_available:
            raise ImportError(
                "HFChasePowerLimitOptimizer needs the transformers package, which is not installed; "
                "install transformers, or call ChasePowerLimitOptimizer's on_step_begin() and "
                "on_epoch_end() from your own training loop"
            )
        self.optimizer = ChasePowerLimitOptimizer(
            monitor,
            signal,
            eta,
            period_s,
            forecaster,
            unit=unit,
            kind=kind,
            history_s=history_s,
            signal_max=signal_max,
            refit_periods=refit_periods,
            world_size=world_size,
            check_steps=check_steps,
            clock=clock,
            wait_steps=wait_steps,
            warmup_steps=warmup_steps,
            profile_steps=profile_steps,
            pl_step=pl_step,
            profile_path=profile_path,
            dry_run=dry_run,
            observer_mode=observer_mode,
            reducer=reducer,
        )

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: forwards to the optimizer's on_step_begin."""
        self.optimizer.on_step_begin()

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: forwards to the optimizer's on_epoch_end."""
        self.optimizer.on_epoch_end()
