# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
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
    def __init__(self, power_limit: float, energy: float, time: float) -> None: ...
    @property
    def power_limit(self) -> int | float: ...
    @property
    def energy(self) -> float: ...
    @property
    def time(self) -> float: ...

class OptimumSelector(abc.ABC):
    @abc.abstractmethod
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class Energy(OptimumSelector):
    def __init__(self) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class Time(OptimumSelector):
    def __init__(self) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class ZeusCost(OptimumSelector):
    eta_knob: float
    world_size: int
    def __init__(self, eta_knob: float, world_size: int = 1) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class MaxSlowdownConstraint(OptimumSelector):
    factor: float
    def __init__(self, factor: float) -> None: ...
    def select(self, measurements: list[PowerLimitMeasurement]) -> int: ...

class OptimizerState:
    phase: ClassVar[Literal["ready", "warmup", "profiling", "done"]]
    @property
    def power_limit(self) -> int | float: ...
    steps: int

@dataclasses.dataclass(frozen=True)
class Ready(OptimizerState):
    next_power_limit: int
    steps: int
    phase: ClassVar[Literal["ready"]]
    @property
    def power_limit(self) -> int | float: ...

@dataclasses.dataclass(frozen=True)
class Warmup(OptimizerState):
    current_power_limit: int
    steps: int
    phase: ClassVar[Literal["warmup"]]
    @property
    def power_limit(self) -> int | float: ...

@dataclasses.dataclass(frozen=True)
class Profiling(OptimizerState):
    current_power_limit: int
    steps: int
    phase: ClassVar[Literal["profiling"]]
    @property
    def power_limit(self) -> int | float: ...

@dataclasses.dataclass(frozen=True)
class Done(OptimizerState):
    optimal_power_limit: int
    phase: ClassVar[Literal["done"]]
    @property
    def power_limit(self) -> int | float: ...
    @property
    def steps(self) -> int: ...  # type: ignore[override]

class GlobalPowerLimitOptimizer(Callback):
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
    def on_step_begin(self) -> None: ...
    def on_epoch_end(self) -> None: ...
    @property
    def state(self) -> OptimizerState: ...
    @property
    def power_limits(self) -> list[int]: ...
    @property
    def current_power_limit(self) -> int: ...
    @property
    def measurements(self) -> list[PowerLimitMeasurement]: ...
    @property
    def optimal_power_limit(self) -> int | float | None: ...
    @property
    def done(self) -> bool: ...
    @property
    def selector_name(self) -> str: ...
    @property
    def dry_run(self) -> bool: ...
    @property
    def observer_mode(self) -> bool: ...
    @property
    def saving(self) -> dict[str, float] | None: ...

class HFGlobalPowerLimitOptimizer:
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
    period_start: datetime.datetime
    signal_seen: float
    forecast: float
    eta_eff: float
    power_limit: int | float
    @property
    def period_start_utc(self) -> int: ...

class ChasePowerLimitOptimizer(Callback):
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
    def on_step_begin(self) -> None: ...
    def on_epoch_end(self) -> None: ...
    @property
    def state(self) -> OptimizerState: ...
    @property
    def decisions(self) -> list[ChaseDecision]: ...
    def decisions_csv(self) -> str: ...
    @property
    def failed_periods(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...
    @property
    def world_size(self) -> int: ...
    @property
    def forecaster_name(self) -> str | None: ...
    @property
    def forecaster_mape(self) -> float | None: ...
    @property
    def signal_kind(self) -> Literal["carbon", "price"]: ...
    @property
    def signal_description(self) -> str: ...
    @property
    def measurements(self) -> list[PowerLimitMeasurement]: ...
    @property
    def current_power_limit(self) -> int: ...
    @property
    def done(self) -> bool: ...
    @property
    def dry_run(self) -> bool: ...
    @property
    def observer_mode(self) -> bool: ...

class HFChasePowerLimitOptimizer:
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
