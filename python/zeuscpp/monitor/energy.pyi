import os
from typing import Callable, Literal, Sequence

from zeuscpp.device.soc.common import SoCMeasurement
from zeuscpp.utils.framework import SyncWith

__all__ = ["ZeusMonitor", "Measurement"]

class Measurement:
    """The time and energy of one window."""

    time: float
    gpu_energy: dict[int, float]
    cpu_energy: dict[int, float] | None
    dram_energy: dict[int, float] | None
    soc_energy: SoCMeasurement | None
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
