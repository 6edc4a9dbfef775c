"""Energy per logging step in a Hugging Face ``Trainer``'s own logs.

:class:`HFEnergyCallback` is a ``transformers.TrainerCallback``: at every
``Trainer.log`` (each ``logging_steps``, evaluation metrics, the final
summary) it ends a :class:`~zeuscpp.monitor.ZeusMonitor` window, adds its
joules to the log entry and starts the next window. Whatever ``report_to``
names (TensorBoard, W&B, MLflow, the console) then records the energy beside
``loss`` at the same step, and ``trainer.state.log_history`` keeps it.
"""

from __future__ import annotations

from typing import Any

from zeuscpp.monitor.energy import Measurement, ZeusMonitor

try:  # Subclass Hugging Face's TrainerCallback when transformers is there.
    from transformers.trainer_callback import TrainerCallback as _HFBase  # type: ignore

    _transformers_available = True
except ImportError:  # depends on the environment
    _HFBase = object
    _transformers_available = False

__all__ = ["HFEnergyCallback"]

_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """Equal, or the same object (a NaN loss is not equal to itself)."""
    return a is b or a == b


class HFEnergyCallback(_HFBase):  # type: ignore[misc, valid-type]
    """Adds the energy since the previous log to every ``Trainer.log`` entry.

    Keys (joules and seconds of the window since the previous log, or since
    ``on_train_begin`` for the first): ``{prefix}_gpu{i}_j`` per GPU of the
    monitor, ``{prefix}_cpu{i}_j`` and ``{prefix}_dram{i}_j`` per CPU package
    measured, ``{prefix}_total_j`` (all GPUs, as ``Measurement.total_energy``)
    and ``{prefix}_time_s``.

    Use :meth:`attach` (``HFEnergyCallback(monitor).attach(trainer)``): the
    Trainer calls the reporters that ``report_to`` adds *before* the callbacks
    passed in ``Trainer(callbacks=[...])``, so a callback appended there adds
    its keys after TensorBoard or W&B has already written the entry. ``attach``
    puts it first. Each process measures its own GPUs; under
    torch.distributed the reporters write rank 0's.

    Attributes:
        last: The measurement of the latest log's window, or None before the first.

    Raises:
        ImportError: ``transformers`` is not installed (as
            :class:`~zeuscpp.optimizer.power_limit.HFGlobalPowerLimitOptimizer`).
    """

    def __init__(self, monitor: ZeusMonitor, prefix: str = "energy") -> None:
        """Measure with ``monitor`` (its GPUs and CPUs); keys start with ``prefix``."""
        if not _transformers_available:
            raise ImportError(
                "HFEnergyCallback needs the transformers package, which is not installed; "
                "install transformers, or use ZeusMonitor.window() in your own training loop"
            )
        self.monitor = monitor
        self.prefix = prefix
        # One key per instance, so two callbacks (say, two prefixes) on one
        # monitor do not end each other's windows.
        self.window_key = f"zeuscpp.HFEnergyCallback.{id(self):x}"
        self.last: Measurement | None = None

    def attach(self, trainer: Any) -> HFEnergyCallback:
        """Make this the first callback of ``trainer``, ahead of its reporters; returns self.

        A callback earlier in the list sees ``on_log``'s entry first, and every
        later one (the ``report_to`` reporters, the console printer) receives
        the same dict with the energy in it. Attaching twice, or attaching a
        callback already passed in ``callbacks=[...]``, leaves one copy.
        """
        callbacks = trainer.callback_handler.callbacks
        callbacks[:] = [self] + [c for c in callbacks if c is not self]
        return self

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: starts the first window (again, for a second ``train()``)."""
        self.monitor.begin_window(self.window_key, restart=True)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Trainer hook: adds the window's energy to ``logs`` and starts the next window."""
        if not self.monitor.window_running(self.window_key):
            # A log outside training (evaluate() alone): nothing measured yet;
            # measure from here so the next log has a window.
            self.monitor.begin_window(self.window_key)
            return
        measurement = self.monitor.end_window(self.window_key)
        self.monitor.begin_window(self.window_key)
        self.last = measurement
        if logs is None:
            return
        entry = self.entry(measurement)
        logs.update(entry)
        # Trainer.log appends a copy of the entry to log_history before calling
        # on_log; put the energy there too so the saved history has it.
        history = getattr(state, "log_history", None)
        if history and all(_same(history[-1].get(k, _MISSING), v) for k, v in logs.items() if k not in entry):
            history[-1].update(entry)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Trainer hook: drops the window that no log will report."""
        if self.monitor.window_running(self.window_key):
            self.monitor.end_window(self.window_key, cancel=True)

    def entry(self, measurement: Measurement) -> dict[str, float]:
        """The log keys of one measurement (see the class docstring)."""
        p = self.prefix
        out = {f"{p}_gpu{i}_j": float(j) for i, j in sorted(measurement.gpu_energy.items())}
        for kind, energies in (("cpu", measurement.cpu_energy), ("dram", measurement.dram_energy)):
            for i, j in sorted((energies or {}).items()):
                out[f"{p}_{kind}{i}_j"] = float(j)
        out[f"{p}_total_j"] = float(measurement.total_energy)
        out[f"{p}_time_s"] = float(measurement.time)
        return out
