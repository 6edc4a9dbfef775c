# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
import os
from types import TracebackType
from typing import Any, Callable, Literal, Sequence, TypeVar

from zeuscpp.device.soc.common import SoCMeasurement
from zeuscpp.utils.framework import SyncWith

__all__ = ["ZeusMonitor", "Measurement", "MeasurementWindow", "measure"]

_F = TypeVar("_F", bound=Callable[..., Any])

class Measurement:
    time: float
    gpu_energy: dict[int, float]
    cpu_energy: dict[int, float] | None
    dram_energy: dict[int, float] | None
    soc_energy: SoCMeasurement | None
    interrupted_by: str | None
    def __init__(
        self,
        time: float,
        gpu_energy: dict[int, float],
        cpu_energy: dict[int, float] | None = None,
        dram_energy: dict[int, float] | None = None,
        soc_energy: SoCMeasurement | None = None,
    ) -> None: ...
    @property
    def total_energy(self) -> float: ...
    @property
    def total_gpu_energy(self) -> float: ...
    @property
    def total_device_energy(self) -> float: ...
    @property
    def is_empty(self) -> bool: ...
    @property
    def gpus_below_update_period(self) -> list[int]: ...
    @property
    def gpu_energy_source(self) -> dict[int, Literal["counter", "power_timeline", "instant_power_approx"]]: ...

class ZeusMonitor:
    approx_instant_energy: bool
    sync_with: SyncWith
    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        cpu_indices: Sequence[int] | None = None,
        approx_instant_energy: bool = False,
        log_file: str | os.PathLike[str] | None = None,
        sync_execution_with: SyncWith = "torch",
    ) -> None: ...
    @property
    def gpu_indices(self) -> list[int]: ...
    @property
    def cpu_indices(self) -> list[int]: ...
    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None: ...
    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement: ...
    def reset_windows(self) -> None: ...
    def window_running(self, key: str) -> bool: ...
    def running(self, key: str, sync_execution: bool = False) -> Measurement: ...
    def window(self, key: str, sync_execution: bool = True, restart: bool = False) -> MeasurementWindow: ...

class MeasurementWindow:
    monitor: Any
    key: str
    sync_execution: bool
    restart: bool
    measurement: Measurement | None
    def __init__(self, monitor: Any, key: str, sync_execution: bool = True, restart: bool = False) -> None: ...
    def begin(self) -> MeasurementWindow: ...
    def end(self, interrupted_by: BaseException | None = None) -> Measurement: ...
    def running(self, sync_execution: bool = False) -> Measurement: ...
    def __enter__(self) -> MeasurementWindow: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

def measure(
    monitor: Any,
    name: str | None = None,
    *,
    sync_execution: bool = True,
    on_measurement: Callable[[Measurement], None] | None = None,
) -> Callable[[_F], _F]: ...
