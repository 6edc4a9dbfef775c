# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
import enum
from typing import Literal, Sequence, Union

__all__ = ["PowerDomain", "PowerMonitor"]

class PowerDomain(enum.Enum):
    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"

DomainLike = Union[PowerDomain, Literal["device_instant", "device_average", "memory_average"]]

class PowerMonitor:
    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        update_period: float | None = None,
        max_samples_per_gpu: int | None = None,
        power_domains: Sequence[DomainLike] | None = None,
    ) -> None: ...
    @property
    def gpu_indices(self) -> list[int]: ...
    @property
    def update_period(self) -> float: ...
    @property
    def power_domains(self) -> list[str]: ...
    @property
    def measurement_domains(self) -> list[PowerDomain]: ...
    def stop(self) -> None: ...
    def get_power_timeline(
        self,
        power_domain: DomainLike,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[int, list[tuple[float, float]]]: ...
    def get_all_power_timelines(
        self,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[str, dict[int, list[tuple[float, float]]]]: ...
    def get_energy(
        self, start_time: float, end_time: float, power_domain: DomainLike | None = None
    ) -> dict[int, float] | None: ...
    def get_power(
        self, time: float | None = None, power_domain: DomainLike = PowerDomain.DEVICE_INSTANT
    ) -> dict[int, float] | None: ...
