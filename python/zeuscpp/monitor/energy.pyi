import os
from types import TracebackType
from typing import Any, Callable, Literal, Sequence, TypeVar

from zeuscpp.device.soc.common import SoCMeasurement
from zeuscpp.utils.framework import SyncWith

__all__ = ["ZeusMonitor", "Measurement", "MeasurementWindow", "measure"]

_F = TypeVar("_F", bound=Callable[..., Any])

class Measurement:
    """The time and energy of one window."""

    time: float
    gpu_energy: dict[int, float]
    cpu_energy: dict[int, float] | None
    dram_energy: dict[int, float] | None
    soc_energy: SoCMeasurement | None
    interrupted_by: str | None
    """repr() of the exception that ended the window early (a ``with`` block or a measured call that raised), or None."""
    def __init__(
        self,
        time: float,
        gpu_energy: dict[int, float],
        cpu_energy: dict[int, float] | None = None,
        dram_energy: dict[int, float] | None = None,
        soc_energy: SoCMeasurement | None = None,
    ) -> None: ...
    @property
    def total_energy(self) -> float:
        """Joules of all GPUs (GPUs only, as in the Python Zeus)."""
    @property
    def total_gpu_energy(self) -> float:
        """Joules of all GPUs."""
    @property
    def total_device_energy(self) -> float:
        """Joules of all GPUs, CPU packages and DRAM."""
    @property
    def is_empty(self) -> bool:
        """True when no device was measured: the totals are not a measured 0 J."""
    @property
    def gpus_below_update_period(self) -> list[int]:
        """GPUs whose energy counter did not move during the window."""
    @property
    def gpu_energy_source(self) -> dict[int, Literal["counter", "power_timeline", "instant_power_approx"]]:
        """Where each GPU's energy came from."""

class ZeusMonitor:
    """Measures the time and energy of named windows over GPUs, CPU packages and DRAM."""

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
    def gpu_indices(self) -> list[int]:
        """Measured GPU indices."""
    @property
    def cpu_indices(self) -> list[int]:
        """Measured CPU package indices."""
    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Begins window `key`."""
    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """Ends window `key` and returns its Measurement."""
    def reset_windows(self) -> None:
        """Drops every running window."""
    def window_running(self, key: str) -> bool:
        """Whether window `key` is running."""
    def running(self, key: str, sync_execution: bool = False) -> Measurement:
        """The Measurement of running window `key` so far, without ending it."""
    def window(self, key: str, sync_execution: bool = True, restart: bool = False) -> MeasurementWindow:
        """Window `key` as a ``with`` block; its Measurement is ``.measurement`` afterwards."""

class MeasurementWindow:
    """One named window of a monitor, begun and ended as a ``with`` block."""

    monitor: Any
    key: str
    sync_execution: bool
    restart: bool
    measurement: Measurement | None
    def __init__(self, monitor: Any, key: str, sync_execution: bool = True, restart: bool = False) -> None: ...
    def begin(self) -> MeasurementWindow:
        """Begins the window."""
    def end(self, interrupted_by: BaseException | None = None) -> Measurement:
        """Ends the window and returns its Measurement."""
    def running(self, sync_execution: bool = False) -> Measurement:
        """The Measurement so far of the open window, which keeps running."""
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
) -> Callable[[_F], _F]:
    """Decorator: each call of the function is a window of `monitor` (``last_measurement`` on the wrapper)."""
