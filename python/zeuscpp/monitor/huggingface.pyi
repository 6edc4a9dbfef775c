# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
from typing import Any

from zeuscpp.monitor.energy import Measurement, ZeusMonitor

__all__ = ["HFEnergyCallback"]

class HFEnergyCallback:
    monitor: ZeusMonitor
    prefix: str
    window_key: str
    last: Measurement | None
    def __init__(self, monitor: ZeusMonitor, prefix: str = "energy") -> None: ...
    def attach(self, trainer: Any) -> HFEnergyCallback: ...
    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None: ...
    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...
    def entry(self, measurement: Measurement) -> dict[str, float]: ...
