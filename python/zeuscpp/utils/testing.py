"""Testing helpers (upstream ``zeus.utils.testing``).

:class:`ReplayZeusMonitor` stands in for :class:`~zeuscpp.monitor.ZeusMonitor`
and, instead of reading GPUs, hands back the windows a real monitor logged
(its ``log_file`` CSV), one row per ``end_window``: a training script runs at
full speed and an optimizer sees the time and energy of the recorded run.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import re
from collections import deque
from typing import Sequence

from zeuscpp.monitor.energy import Measurement
from zeuscpp.utils.framework import sync_execution as _sync_execution

__all__ = ["ReplayZeusMonitor"]

logger = logging.getLogger(__name__)

_DEVICE_COLUMN = re.compile(r"(gpu|cpu|dram)(\d+)_energy")


class ReplayZeusMonitor:
    """A ZeusMonitor that replays the windows a real monitor logged (for tests).

    The log is a ``ZeusMonitor(log_file=...)`` CSV
    (``start_time,window_name,elapsed_time,gpu<i>_energy,...``); rows are
    replayed in order, one per ``end_window`` (windows that overlapped were
    logged in the order they ended, which is the order replayed).
    ``begin_window`` only records the name. The methods are ZeusMonitor's, so
    anything that takes a monitor, :class:`GlobalPowerLimitOptimizer` included,
    takes this one.

    Differences from ZeusMonitor, as upstream: a window already running raises
    ``RuntimeError`` (not ``ValueError``); so does ending one that is not, and
    running out of rows. Beyond upstream, ``cpu<i>_energy``/``dram<i>_energy``
    columns of zeuscpp's logs are replayed into ``cpu_energy``/``dram_energy``,
    and an empty cell (a device whose reading failed) is left out of the
    measurement. Unlike upstream's, it is not a ZeusMonitor subclass
    (ZeusMonitor is a C++ class here), so ``isinstance(m, ZeusMonitor)`` is False.

    Args:
        gpu_indices: GPU indices of the log's energy columns, in order. None:
            read from the header (``gpu<i>_energy``). Not translated by
            ``CUDA_VISIBLE_DEVICES``.
        approx_instant_energy: Accepted for ZeusMonitor's signature; not used.
        log_file: The CSV log to replay. Required.
        ignore_sync_execution: Never wait for queued GPU work (upstream waits,
            through torch, when a call asks for sync).
        match_window_name: Require each ended window's name to be the next
            row's ``window_name`` (``RuntimeError`` otherwise).

    Raises:
        ValueError: no log_file, a header that is not a ZeusMonitor log's, or
            gpu_indices that do not match the header's GPU columns in number.
        OSError: the file cannot be read.
    """

    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        approx_instant_energy: bool = False,
        log_file: str | os.PathLike[str] | None = None,
        ignore_sync_execution: bool = False,
        match_window_name: bool = True,
    ) -> None:
        """Read the log (see the class docstring for the arguments)."""
        if log_file is None:
            raise ValueError("ReplayZeusMonitor needs log_file: the ZeusMonitor CSV log to replay")
        self.approx_instant_energy = approx_instant_energy
        self.ignore_sync_execution = ignore_sync_execution
        self.match_window_name = match_window_name
        self.log_path = os.fspath(log_file)
        with open(log_file, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or header[:3] != ["start_time", "window_name", "elapsed_time"]:
                raise ValueError(
                    f"{self.log_path} is not a ZeusMonitor log: its header must start with "
                    f"start_time,window_name,elapsed_time (got {header!r})"
                )
            columns = []
            for name in header[3:]:
                match = _DEVICE_COLUMN.fullmatch(name.strip())
                if match is None:
                    raise ValueError(
                        f"{self.log_path}: column {name!r} is not gpu<i>_energy, cpu<i>_energy or dram<i>_energy"
                    )
                columns.append((match.group(1), int(match.group(2))))
            self._rows: deque[tuple[int, list[str]]] = deque(
                (line, row) for line, row in enumerate(reader, start=2) if row
            )
        logged_gpus = [index for kind, index in columns if kind == "gpu"]
        if gpu_indices is None:
            gpu_indices = logged_gpus
        elif len(gpu_indices) != len(logged_gpus):
            raise ValueError(
                f"gpu_indices {list(gpu_indices)} name {len(gpu_indices)} GPU(s) but {self.log_path} "
                f"has {len(logged_gpus)} GPU energy column(s)"
            )
        self.gpu_indices = [int(i) for i in gpu_indices]
        self.nvml_gpu_indices = self.gpu_indices
        self.cpu_indices = [index for kind, index in columns if kind == "cpu"]
        # Column k of a row's energies -> (kind, index as reported).
        gpu_iter = iter(self.gpu_indices)
        self._columns = [(kind, next(gpu_iter) if kind == "gpu" else index) for kind, index in columns]
        self.ongoing_windows: list[str] = []
        logger.info("Replaying from '%s' with GPU indices %s", self.log_path, self.gpu_indices)

    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Start window ``key`` (records the name only).

        Raises:
            RuntimeError: ``key`` is running and ``restart`` is False.
        """
        if key in self.ongoing_windows:
            if not restart:
                raise RuntimeError(f"window '{key}' is already running; end it or pass restart=True")
            self.ongoing_windows.remove(key)
        self.ongoing_windows.append(key)
        self._sync(sync_execution)

    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """End window ``key`` and return the next logged row as its Measurement.

        ``cancel=True`` consumes no row and returns zero time and energy.

        Raises:
            RuntimeError: ``key`` is not running, no row is left, the row's
                window name differs (with match_window_name), the row has
                the wrong number of cells, or a time or energy in it is not
                a finite number at least 0 (NaN, infinite, negative, text).
        """
        try:
            self.ongoing_windows.remove(key)
        except ValueError:
            raise RuntimeError(f"window '{key}' is not running") from None
        self._sync(sync_execution)
        if cancel:
            return Measurement(time=0.0, gpu_energy={i: 0.0 for i in self.gpu_indices})
        if not self._rows:
            raise RuntimeError(f"no rows left in {self.log_path} to replay window '{key}'")
        line, row = self._rows.popleft()
        if len(row) != 3 + len(self._columns):
            raise RuntimeError(
                f"{self.log_path} line {line} has {len(row)} cells; the header has {3 + len(self._columns)}"
            )
        if self.match_window_name and row[1] != key:
            raise RuntimeError(f"{self.log_path} line {line} is window '{row[1]}', not '{key}'")
        energy: dict[str, dict[int, float]] = {"gpu": {}, "cpu": {}, "dram": {}}
        for (kind, index), cell in zip(self._columns, row[3:]):
            if cell.strip():
                energy[kind][index] = self._amount(line, f"{kind}{index}_energy", cell)
        return Measurement(
            time=self._amount(line, "elapsed_time", row[2]),
            gpu_energy=energy["gpu"],
            cpu_energy=energy["cpu"] if self.cpu_indices else None,
            dram_energy=energy["dram"] if energy["dram"] else None,
        )

    def _amount(self, line: int, column: str, cell: str) -> float:
        """A logged time or energy: a finite number, not negative.

        A monitor never logs NaN, infinity or a negative amount; replaying one
        would hand the optimizer a measurement no GPU can produce.
        """
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0.0):
            raise RuntimeError(
                f"{self.log_path} line {line}: {column} is {cell.strip()[:40]!r}; "
                "a time or energy must be a finite number, not negative"
            )
        return value

    def window_running(self, key: str) -> bool:
        """Whether window ``key`` was begun and not yet ended."""
        return key in self.ongoing_windows

    def reset_windows(self) -> None:
        """Forget every running window (no row is consumed)."""
        self.ongoing_windows.clear()

    def _sync(self, requested: bool) -> None:
        if requested and not self.ignore_sync_execution and self.gpu_indices:
            _sync_execution(self.gpu_indices)
