"""What the carbon and price monitors share: windows over the library's HourlyRateMonitor."""

from __future__ import annotations

from typing import Any, Sequence

from zeuscpp._core import carbon as _carbon
from zeuscpp.device import get_gpus
from zeuscpp.utils.framework import SyncWith, sync_function


class HourlyRateWindows:
    """Named windows whose energy is split at UTC hours and priced by a rate provider.

    The subclasses turn the library's result dict into their upstream dataclass.
    """

    def __init__(
        self,
        provider_core: Any,
        gpu_indices: Sequence[int] | None,
        cpu_indices: Sequence[int] | None,
        sync_execution_with: SyncWith,
    ) -> None:
        """Start the monitor and its hour-boundary thread."""
        resolved = list(range(len(get_gpus()))) if gpu_indices is None else list(gpu_indices)
        self._monitor = _carbon.HourlyRateMonitor(
            provider_core,
            None if gpu_indices is None else list(gpu_indices),
            None if cpu_indices is None else list(cpu_indices),
            sync_function(sync_execution_with, resolved),
        )

    def begin_window(self, key: str, sync_execution: bool = True) -> None:
        """Begin window ``key`` (``ValueError`` if it is running)."""
        self._monitor.begin_window(key, sync_execution)

    def _end(self, key: str, sync_execution: bool) -> dict[str, Any]:
        return self._monitor._end_window(key, sync_execution)

    def stop(self) -> None:
        """Stop the hour-boundary thread (idempotent)."""
        self._monitor.stop()
