"""Power timelines (upstream ``zeus.monitor.power``).

Sampling runs in a C++ thread of this process (the Python Zeus spawns one
process per power domain): no subprocess, nothing to pickle, no main-module
guard needed, and it stops cleanly when the interpreter exits. Timestamps are
``time.time()`` values, as upstream.
"""

from __future__ import annotations

import enum
from typing import Literal, Sequence, Union

from zeuscpp._core import monitor as _monitor
from zeuscpp.exception import ZeusInvalidArgumentError

__all__ = ["PowerDomain", "PowerMonitor"]


class PowerDomain(enum.Enum):
    """Power measurement domains."""

    DEVICE_INSTANT = "device_instant"
    """The board's current power draw."""
    DEVICE_AVERAGE = "device_average"
    """The driver's trailing (about 1 s) average of board power."""
    MEMORY_AVERAGE = "memory_average"
    """Average power of the GPU memory (HBM GPUs only)."""


DomainLike = Union[PowerDomain, Literal["device_instant", "device_average", "memory_average"]]


def _domain_value(domain: DomainLike) -> str:
    return PowerDomain(domain).value


class PowerMonitor(_monitor.PowerMonitor):
    """Samples GPU power in the background into per-GPU, per-domain timelines.

    Args:
        gpu_indices: GPUs to monitor (CUDA indices). None: all.
        update_period: Sampling interval in seconds. None: inferred from how often
            the GPUs' readings change (half the fastest period, at most 0.1 s).
        max_samples_per_gpu: Samples kept per GPU and domain (oldest dropped).
            None: the library's bound (65536; runs of equal readings are stored
            as their two ends, so this covers long runs).
        power_domains: Domains to sample. None: instant power, or average power
            on GPUs without instant readings.

    Raises:
        ZeusInvalidArgumentError: empty lists, unknown GPU indices, a domain the
            GPUs do not support (all are ``ValueError``).
    """

    def __init__(
        self,
        gpu_indices: Sequence[int] | None = None,
        update_period: float | None = None,
        max_samples_per_gpu: int | None = None,
        power_domains: Sequence[DomainLike] | None = None,
    ) -> None:
        """Start sampling (see the class docstring for the arguments)."""
        domains = None if power_domains is None else [_domain_value(d) for d in power_domains]
        super().__init__(
            None if gpu_indices is None else list(gpu_indices),
            update_period,
            max_samples_per_gpu,
            domains,
        )

    @property
    def measurement_domains(self) -> list[PowerDomain]:
        """The sampled domains (upstream's attribute name)."""
        return [PowerDomain(d) for d in self.power_domains]

    def _default_domain(self) -> str:
        domains = self.power_domains
        for d in ("device_instant", "device_average"):
            if d in domains:
                return d
        raise ZeusInvalidArgumentError(
            "neither device_instant nor device_average power is being monitored; pass power_domain"
        )

    def get_power_timeline(
        self,
        power_domain: DomainLike,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[int, list[tuple[float, float]]]:
        """Samples ``{gpu: [(time.time() timestamp, W), ...]}`` in [start_time, end_time], time-ordered."""
        return self._timeline(_domain_value(power_domain), gpu_index, start_time, end_time)

    def get_all_power_timelines(
        self,
        gpu_index: int | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
    ) -> dict[str, dict[int, list[tuple[float, float]]]]:
        """Timelines of every sampled domain: ``{domain value: {gpu: [(ts, W), ...]}}``."""
        return {d: self._timeline(d, gpu_index, start_time, end_time) for d in self.power_domains}

    def get_energy(
        self, start_time: float, end_time: float, power_domain: DomainLike | None = None
    ) -> dict[int, float] | None:
        """Joules per GPU over [start_time, end_time] by integrating the power samples.

        The power at each edge is interpolated, so short windows and constant
        power are not under-counted. None when a GPU has no samples.

        Args:
            start_time: ``time.time()`` at the start.
            end_time: ``time.time()`` at the end.
            power_domain: None: instant if sampled, else average.
        """
        domain = self._default_domain() if power_domain is None else _domain_value(power_domain)
        return self._energy(start_time, end_time, domain)

    def get_power(
        self, time: float | None = None, power_domain: DomainLike = PowerDomain.DEVICE_INSTANT
    ) -> dict[int, float] | None:
        """Watts per GPU: the latest sample, or at ``time`` (interpolated). None if a GPU has no sample."""
        return self._power(time, _domain_value(power_domain))

