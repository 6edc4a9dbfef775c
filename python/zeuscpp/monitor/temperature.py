"""GPU temperature timelines (upstream ``zeus.monitor.temperature``).

Sampling runs in a C++ thread of this process (upstream spawns a process).
Timestamps are ``time.time()`` values. NVIDIA GPUs report the GPU core sensor,
AMD GPUs the hotspot sensor, in degrees Celsius.
"""

from __future__ import annotations

from typing import Sequence

from zeuscpp._core import monitor as _monitor

__all__ = ["TemperatureMonitor"]


class TemperatureMonitor(_monitor.TemperatureMonitor):
    """Samples GPU temperatures in the background into per-GPU timelines.

    Samples are deduplicated: a run of equal readings is kept as its first and
    last sample.

    Args:
        gpu_indices: GPUs to monitor (CUDA/HIP indices). None: all.
        update_period: Seconds between samples (default 1.0).
        max_samples_per_gpu: Samples kept per GPU (oldest dropped). None: 65536.

    Raises:
        ZeusInvalidArgumentError: an empty list, an unknown GPU index or a
            non-positive period (``ValueError``).
    """

    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        update_period: float = 1.0,
        max_samples_per_gpu: int | None = None,
    ) -> None:
        """Start sampling (see the class docstring for the arguments)."""
        super().__init__(
            None if gpu_indices is None else list(gpu_indices), update_period, max_samples_per_gpu
        )

    def get_temperature_timeline(
        self,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[int, list[tuple[float, float]]]:
        """Samples ``{gpu: [(time.time() timestamp, degrees C), ...]}`` in [start_time, end_time]."""
        return self._timeline(gpu_index, start_time, end_time)

    def get_temperature(self, time: float | None = None) -> dict[int, float] | None:
        """Degrees C per GPU: the latest sample, or the one nearest to ``time``.

        None when a GPU has no sample yet.
        """
        return self._temperature(time)
