# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
from typing import Sequence

__all__ = ["TemperatureMonitor"]

class TemperatureMonitor:
    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        update_period: float = 1.0,
        max_samples_per_gpu: int | None = None,
    ) -> None: ...
    @property
    def gpu_indices(self) -> list[int]: ...
    @property
    def update_period(self) -> float: ...
    def stop(self) -> None: ...
    def get_temperature_timeline(
        self,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[int, list[tuple[float, float]]]: ...
    def get_temperature(self, time: float | None = None) -> dict[int, float] | None: ...
