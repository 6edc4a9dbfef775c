import enum
from typing import Literal, Sequence, Union

__all__ = ["PowerDomain", "PowerMonitor"]

class PowerDomain(enum.Enum):
    """Power measurement domains."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"

DomainLike = Union[PowerDomain, Literal["device_instant", "device_average", "memory_average"]]

class PowerMonitor:
    """Samples GPU power in the background into per-GPU, per-domain timelines."""

    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        update_period: float | None = None,
        max_samples_per_gpu: int | None = None,
        power_domains: Sequence[DomainLike] | None = None,
    ) -> None: ...
    @property
    def gpu_indices(self) -> list[int]:
        """Monitored GPU indices."""
    @property
    def update_period(self) -> float:
        """Sampling interval (s)."""
    @property
    def power_domains(self) -> list[str]:
        """Sampled domain values."""
    @property
    def measurement_domains(self) -> list[PowerDomain]:
        """The sampled domains."""
    def stop(self) -> None:
        """Stops sampling (idempotent)."""
    def get_power_timeline(
        self,
        power_domain: DomainLike,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[int, list[tuple[float, float]]]:
        """Samples {gpu: [(time.time() timestamp, W), ...]}."""
    def get_all_power_timelines(
        self,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[str, dict[int, list[tuple[float, float]]]]:
        """Timelines of every sampled domain."""
    def get_energy(
        self, start_time: float, end_time: float, power_domain: DomainLike | None = None
    ) -> dict[int, float] | None:
        """Joules per GPU over [start_time, end_time]."""
    def get_power(
        self, time: float | None = None, power_domain: DomainLike = PowerDomain.DEVICE_INSTANT
    ) -> dict[int, float] | None:
        """Watts per GPU, latest or at `time`."""
