"""Energy windows (upstream ``zeus.monitor.energy``).

``begin_window``/``end_window`` are the C++ library's, called directly: one
counter read per device, the GIL released around reads that can take long
(see docs/python.md, "GIL"), safe from several Python threads at once.

Ours, beyond upstream: ``monitor.window(name)`` (a window as a ``with`` block),
the :func:`measure` decorator, and ``monitor.running(name)`` (the energy so far
of a window that keeps running).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
from types import TracebackType
from typing import Any, Callable, Sequence, TypeVar

from zeuscpp._core import monitor as _monitor
from zeuscpp.device import get_gpus
from zeuscpp.utils.framework import SyncWith, sync_function

__all__ = ["ZeusMonitor", "Measurement", "MeasurementWindow", "measure"]

_log = logging.getLogger("zeuscpp")

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

    def window(self, key: str, sync_execution: bool = True, restart: bool = False) -> MeasurementWindow:
        """Window `key` as a ``with`` block; its Measurement is ``.measurement`` afterwards::

            with monitor.window("epoch") as w:
                train_one_epoch()
            print(w.measurement.total_energy)

        The window ends however the block ends; when it raised, the
        measurement's ``interrupted_by`` is ``repr()`` of that exception (which
        still propagates). Windows made this way nest and overlap with each other
        and with ``begin_window``/``end_window`` windows, by name.
        """
        return MeasurementWindow(self, key, sync_execution=sync_execution, restart=restart)


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


class MeasurementWindow:
    """One named window of a monitor, begun and ended as a ``with`` block (``monitor.window(key)``).

    ``begin()``/``end()`` do the same without a block (for windows that
    overlap rather than nest). ``measurement`` is None until the window ends;
    ``running()`` reads it so far without ending it.

    Args:
        monitor: A :class:`ZeusMonitor` (anything with its ``begin_window``,
            ``end_window`` and, for ``running()``, ``running`` methods).
        key: The window's name, as for ``begin_window``.
        sync_execution: Wait for queued GPU work at both edges (not at an edge
            reached through an exception: the GPU may be what failed).
        restart: Restart a window of that name that is already running.
    """

    def __init__(self, monitor: Any, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Describe the window; nothing is measured until it begins."""
        if not isinstance(key, str):
            raise TypeError(f"a window's key must be a str, got {key!r}")
        self.monitor = monitor
        self.key = key
        self.sync_execution = sync_execution
        self.restart = restart
        self.measurement: Measurement | None = None
        self._open = False

    def begin(self) -> MeasurementWindow:
        """Begins the window (``ValueError`` when one of that name runs, unless ``restart``)."""
        self.monitor.begin_window(self.key, sync_execution=self.sync_execution, restart=self.restart)
        self.measurement = None
        self._open = True
        return self

    def end(self, interrupted_by: BaseException | None = None) -> Measurement:
        """Ends the window and returns its Measurement (also kept in ``measurement``).

        ``interrupted_by``: the exception that cut the work short; the
        measurement records its ``repr()`` and the GPUs are not synced.
        """
        if not self._open:
            raise RuntimeError(f"window '{self.key}' was not begun through this object, or has ended")
        self._open = False
        m = self.monitor.end_window(self.key, sync_execution=self.sync_execution and interrupted_by is None)
        if interrupted_by is not None:
            m.interrupted_by = repr(interrupted_by)
        self.measurement = m
        return m

    def running(self, sync_execution: bool = False) -> Measurement:
        """The Measurement so far of the open window, which keeps running."""
        return self.monitor.running(self.key, sync_execution=sync_execution)

    def __enter__(self) -> MeasurementWindow:
        return self.begin()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.end()
            return
        # The block's exception is what the caller must see: a failure to end
        # the window (e.g. it was reset meanwhile) is logged, not raised over it.
        try:
            self.end(interrupted_by=exc)
        except Exception as end_error:  # noqa: BLE001
            _log.warning("window '%s' could not be ended after %r: %s", self.key, exc, end_error)

    def __repr__(self) -> str:
        state = "running" if self._open else ("ended" if self.measurement is not None else "not begun")
        return f"MeasurementWindow(key={self.key!r}, {state})"


_F = TypeVar("_F", bound=Callable[..., Any])


def measure(
    monitor: Any,
    name: str | None = None,
    *,
    sync_execution: bool = True,
    on_measurement: Callable[[Measurement], None] | None = None,
) -> Callable[[_F], _F]:
    """Decorator: each call of the function is a window of `monitor`::

        @measure(monitor, "train_step")
        def train_step(batch): ...

        train_step(batch)
        print(train_step.last_measurement.total_energy)

    The window is named `name` (default: the function's qualified name). The
    latest call's Measurement is the wrapper's ``last_measurement``, and
    ``on_measurement(m)`` is called with each one. A call that raises still
    ends its window (``interrupted_by`` set; ``on_measurement`` sees it too)
    and the exception propagates. A call made while a window of that name
    runs (recursion, another thread) is measured under ``name#2``, ``name#3``, ...
    Coroutine functions are refused (the window would end when the coroutine
    is created, not when it finishes).
    """

    def decorate(fn: _F) -> _F:
        if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(f"measure() cannot measure the async function {fn.__qualname__}")
        key = name if name is not None else fn.__qualname__

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            window = _begin_free_window(monitor, key, sync_execution)
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                window.__exit__(type(exc), exc, exc.__traceback__)
                _deliver(wrapper, window, on_measurement)
                raise
            window.end()
            _deliver(wrapper, window, on_measurement)
            return result

        wrapper.last_measurement = None  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def _begin_free_window(monitor: Any, key: str, sync_execution: bool) -> MeasurementWindow:
    from zeuscpp.exception import ZeusAlreadyExistsError

    suffix = 1
    while True:
        window_key = key if suffix == 1 else f"{key}#{suffix}"
        try:
            return MeasurementWindow(monitor, window_key, sync_execution=sync_execution).begin()
        except ZeusAlreadyExistsError:
            suffix += 1


def _deliver(wrapper: Any, window: MeasurementWindow, on_measurement: Callable[[Measurement], None] | None) -> None:
    if window.measurement is None:
        return
    wrapper.last_measurement = window.measurement
    if on_measurement is not None:
        on_measurement(window.measurement)
