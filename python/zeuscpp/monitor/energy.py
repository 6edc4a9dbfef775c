"""Energy windows (upstream ``zeus.monitor.energy``).

``begin_window``/``end_window`` are the C++ library's, called directly: one
counter read per device, the GIL released around the reads, safe from several
Python threads at once.
"""

from __future__ import annotations

import os
from typing import Sequence

from zeuscpp._core import monitor as _monitor
from zeuscpp.device import get_gpus
from zeuscpp.utils.framework import SyncWith, sync_function

__all__ = ["ZeusMonitor", "Measurement"]

Measurement = _monitor.Measurement


class ZeusMonitor(_monitor.ZeusMonitor):
    """Measures the time and energy of named windows over GPUs, CPU packages and DRAM.

    Windows nest and overlap freely; each has its own name::

        monitor = ZeusMonitor(gpu_indices=[0])
        monitor.begin_window("epoch")
        train_one_epoch()
        measurement = monitor.end_window("epoch")
        print(measurement.time, measurement.total_energy)

    Args:
        gpu_indices: GPUs to measure, as CUDA numbers them (``CUDA_VISIBLE_DEVICES``
            applied). None: all visible GPUs.
        cpu_indices: CPU packages (RAPL) to measure. None: all readable packages.
        approx_instant_energy: For windows shorter than the energy counter's update
            period, use instant power x time instead of the 0 the counter gives.
        log_file: CSV file with a row per ended window
            (``start_time,window_name,elapsed_time,gpu<i>_energy...``). None: no log.
        sync_execution_with: How to wait for queued GPU work before reading
            counters: ``"torch"`` (default; nothing on CPU-only PyTorch),
            ``"jax"``, ``"cupy"``, a callable taking no arguments, or None.

    Raises:
        ZeusInvalidArgumentError: an index that does not exist or is given twice,
            or an unknown ``sync_execution_with`` (both are ``ValueError``).
    """

    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        cpu_indices: Sequence[int] | None = None,
        approx_instant_energy: bool = False,
        log_file: str | os.PathLike[str] | None = None,
        sync_execution_with: SyncWith = "torch",
    ) -> None:
        """Start measuring (see the class docstring for the arguments)."""
        resolved = list(range(len(get_gpus()))) if gpu_indices is None else gpu_indices
        sync = sync_function(sync_execution_with, _indices_or_empty(resolved))
        super().__init__(
            None if gpu_indices is None else _as_index_list(gpu_indices, "gpu_indices"),
            None if cpu_indices is None else _as_index_list(cpu_indices, "cpu_indices"),
            approx_instant_energy,
            log_file,
            sync,
        )
        self.approx_instant_energy = approx_instant_energy
        self.sync_with = sync_execution_with


def _as_index_list(indices: Sequence[int], what: str) -> list[int]:
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
        raise TypeError(f"{what} must be a list of integers or None, got {indices!r}")
    out = []
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{what} must be a list of integers or None, got {indices!r}")
        out.append(i)
    return out


def _indices_or_empty(indices: Sequence[int]) -> list[int]:
    try:
        return [int(i) for i in indices]
    except (TypeError, ValueError):
        return []  # the core reports the bad argument
