from typing import Any

from zeuscpp.monitor.energy import Measurement, ZeusMonitor

__all__ = ["HFEnergyCallback"]

class HFEnergyCallback:
    """Adds the energy since the previous log to every ``Trainer.log`` entry (a ``TrainerCallback``)."""

    monitor: ZeusMonitor
    prefix: str
    window_key: str
    last: Measurement | None
    """The measurement of the latest log's window, or None before the first."""
    def __init__(self, monitor: ZeusMonitor, prefix: str = "energy") -> None: ...
    def attach(self, trainer: Any) -> HFEnergyCallback:
        """Make this the first callback of ``trainer``, ahead of its reporters; returns self."""
    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None: ...
    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def entry(self, measurement: Measurement) -> dict[str, float]:
        """The log keys of one measurement."""
