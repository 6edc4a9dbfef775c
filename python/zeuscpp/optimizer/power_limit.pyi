import abc
import dataclasses
import datetime
import os
from typing import Any, Callable, ClassVar, Literal

from zeuscpp.callback import Callback
from zeuscpp.monitor.energy import ZeusMonitor

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

class PowerLimitMeasurement:
    """Energy (J) and time (s) of the same amount of training at one power limit (W)."""

    def __init__(self, power_limit: float, energy: float, time: float) -> None: ...
    @property
    def power_limit(self) -> int | float:
        """Power limit (W)."""
    @property
    def energy(self) -> float:
        """Energy (J)."""
    @property
    def time(self) -> float:
        """Time (s)."""

class OptimumSelector(abc.ABC):
    """Base class of optimum power-limit selectors."""

    @abc.abstractmethod
    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        """Select the optimal power limit (W) from measurements."""

class Energy(OptimumSelector):
    """Selects the power limit that minimizes energy."""

    def __init__(self) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class Time(OptimumSelector):
    """Selects the power limit that minimizes time."""

    def __init__(self) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class ZeusCost(OptimumSelector):
    """Selects the power limit that minimizes the Zeus time-energy cost."""

    eta_knob: float
    world_size: int
    def __init__(self, eta_knob: float, world_size: int = 1) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class MaxSlowdownConstraint(OptimumSelector):
    """Selects the lowest power limit within a slowdown factor of the maximum limit's time."""

    factor: float
    def __init__(self, factor: float) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class OptimizerState:
    """Base of the optimizer's states (upstream's Ready, Warmup, Profiling, Done)."""

    phase: ClassVar[Literal["ready", "warmup", "profiling", "done"]]
    @property
    def power_limit(self) -> int | float:
        """The power limit (W) this state concerns."""
    steps: int

@dataclasses.dataclass(frozen=True)
class Ready(OptimizerState):
    """Waiting to profile next_power_limit (mW)."""

    next_power_limit: int
    steps: int
    phase: ClassVar[Literal["ready"]]
    @property
    def power_limit(self) -> int | float:
        """The limit to profile next, in W."""

@dataclasses.dataclass(frozen=True)
class Warmup(OptimizerState):
    """Warming up at current_power_limit (mW)."""

    current_power_limit: int
    steps: int
    phase: ClassVar[Literal["warmup"]]
    @property
    def power_limit(self) -> int | float:
        """The limit being warmed up, in W."""

@dataclasses.dataclass(frozen=True)
class Profiling(OptimizerState):
    """Measuring current_power_limit (mW)."""

    current_power_limit: int
    steps: int
    phase: ClassVar[Literal["profiling"]]
    @property
    def power_limit(self) -> int | float:
        """The limit being measured, in W."""

@dataclasses.dataclass(frozen=True)
class Done(OptimizerState):
    """Profiling is over; optimal_power_limit (mW) is set."""

    optimal_power_limit: int
    phase: ClassVar[Literal["done"]]
    @property
    def power_limit(self) -> int | float:
        """The chosen limit, in W."""
    @property
    def steps(self) -> int:  # type: ignore[override]
        """Always 0."""

class GlobalPowerLimitOptimizer(Callback):
    """Finds the power limit that best trades time for energy, during training."""

    monitor: Any
    optimum_selector: OptimumSelector | None
    reducer: Any
    wait_steps: int
    warmup_steps: int
    profile_steps: int
    pl_step: int
    profile_path: str | os.PathLike[str] | None
    def __init__(
        self,
        monitor: ZeusMonitor | Any,
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
    ) -> None: ...
    def on_step_begin(self) -> None:
        """Call before every training step."""
    def on_epoch_end(self) -> None:
        """Call after every epoch."""
    @property
    def state(self) -> OptimizerState:
        """The current state: Ready, Warmup, Profiling or Done."""
    @property
    def power_limits(self) -> list[int]:
        """Candidate limits in mW, highest first."""
    @property
    def current_power_limit(self) -> int:
        """The limit last set on the GPUs (mW)."""
    @property
    def measurements(self) -> list[PowerLimitMeasurement]:
        """Completed measurements, in profiling order."""
    @property
    def optimal_power_limit(self) -> int | float | None:
        """The selector's choice (W) once done."""
    @property
    def done(self) -> bool:
        """Whether profiling is over."""
    @property
    def selector_name(self) -> str:
        """The selector in use."""
    @property
    def dry_run(self) -> bool:
        """Dry-run mode."""
    @property
    def observer_mode(self) -> bool:
        """Observer mode."""
    @property
    def saving(self) -> dict[str, float] | None:
        """Energy saved and time changed at the chosen limit against the maximum."""

class HFGlobalPowerLimitOptimizer:
    """GlobalPowerLimitOptimizer as a Hugging Face TrainerCallback (ImportError without transformers)."""

    optimizer: GlobalPowerLimitOptimizer
    def __init__(
        self,
        monitor: ZeusMonitor | Any,
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
    ) -> None: ...
    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...

@dataclasses.dataclass(frozen=True)
class ChaseDecision:
    """One period's decision: period start (UTC), signal seen, forecast, eta_eff, limit (W)."""

    period_start: datetime.datetime
    signal_seen: float
    forecast: float
    eta_eff: float
    power_limit: int | float
    @property
    def period_start_utc(self) -> int:
        """The period's start in Unix seconds."""

class ChasePowerLimitOptimizer(Callback):
    """Carbon- or price-aware power limits (Chase): Zeus's profiling, then a limit per period."""

    monitor: Any
    signal: Any
    reducer: Any
    eta: float
    period_s: int
    profile_path: str | os.PathLike[str] | None
    def __init__(
        self,
        monitor: ZeusMonitor | Any,
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
    ) -> None: ...
    def on_step_begin(self) -> None:
        """Call before every training step."""
    def on_epoch_end(self) -> None:
        """Call after every epoch."""
    @property
    def state(self) -> OptimizerState:
        """The profiling state: Ready, Warmup, Profiling or Done."""
    @property
    def decisions(self) -> list[ChaseDecision]:
        """Every decision so far, oldest first."""
    def decisions_csv(self) -> str:
        """The decisions as CSV: period_start_utc,signal_seen,forecast,eta_eff,power_limit_w."""
    @property
    def failed_periods(self) -> int:
        """Periods where the signal failed and the last limit was kept."""
    @property
    def last_error(self) -> str | None:
        """Why the last failed period failed; None once a decision succeeds again."""
    @property
    def world_size(self) -> int:
        """The job's GPU count (MaxPower = the largest limit times this)."""
    @property
    def forecaster_name(self) -> str | None:
        """The fitted forecaster's name (None before the first decision, and on ranks > 0)."""
    @property
    def forecaster_mape(self) -> float | None:
        """The forecaster's one-step MAPE (%) on its history, or None."""
    @property
    def signal_kind(self) -> Literal["carbon", "price"]:
        """'carbon' or 'price'."""
    @property
    def signal_description(self) -> str:
        """Where the signal comes from."""
    @property
    def measurements(self) -> list[PowerLimitMeasurement]:
        """The profile: completed measurements, in profiling order."""
    @property
    def current_power_limit(self) -> int:
        """The limit last set on the GPUs (mW)."""
    @property
    def done(self) -> bool:
        """Whether profiling is over."""
    @property
    def dry_run(self) -> bool:
        """Dry-run mode."""
    @property
    def observer_mode(self) -> bool:
        """Observer mode."""

class HFChasePowerLimitOptimizer:
    """ChasePowerLimitOptimizer as a Hugging Face TrainerCallback (ImportError without transformers)."""

    optimizer: ChasePowerLimitOptimizer
    def __init__(
        self,
        monitor: ZeusMonitor | Any,
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
    ) -> None: ...
    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
