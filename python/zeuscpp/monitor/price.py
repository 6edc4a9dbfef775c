"""Electricity cost of measurement windows (upstream ``zeus.monitor.price``).

Same hourly structure as :mod:`zeuscpp.monitor.carbon`: each UTC hour's
energy per device times that hour's price gives dollars.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal, Sequence

from zeuscpp._core import carbon as _carbon
from zeuscpp.monitor._hourly import HourlyRateWindows
from zeuscpp.utils.framework import SyncWith

__all__ = [
    "ElectricityPriceProvider",
    "OpenEIClient",
    "ConstantElectricityPrice",
    "CsvElectricityPrice",
    "EnergyCostMeasurement",
    "EnergyCostMonitor",
]


class ElectricityPriceProvider:
    """Where hourly electricity prices ($/kWh) come from."""

    _core: _carbon.RateProvider

    def get_electricity_price(self, hour: int) -> float:
        """$/kWh of the UTC hour that starts at ``hour`` (Unix seconds)."""
        return self._core.rate(hour)

    def __repr__(self) -> str:
        """The provider's description."""
        return f"{type(self).__name__}({self._core.description})"


class OpenEIClient(ElectricityPriceProvider):
    """A utility tariff from the OpenEI utility-rate API.

    The API key is read from ``OPENEI_API_KEY`` (upstream embeds a shared key;
    this never does).

    Args:
        location: (latitude, longitude).
        label: The tariff's unique label.
        sector: ``Residential``, ``Commercial``, ``Industrial`` or ``Lighting``.
        radius: Search radius in miles.
        utc_offset_hours: Local time of the schedules; None: this process's zone.
    """

    def __init__(
        self,
        location: tuple[float, float],
        label: str,
        sector: Literal["Residential", "Commercial", "Industrial", "Lighting"] = "Residential",
        radius: int = 0,
        base_url: str | None = None,
        utc_offset_hours: float | None = None,
    ) -> None:
        """Check the arguments; the tariff is fetched when a price is needed."""
        lat, lon = location
        self._core = _carbon.openei(lat, lon, label, sector, radius, base_url, utc_offset_hours)


class ConstantElectricityPrice(ElectricityPriceProvider):
    """The same price every hour."""

    def __init__(self, dollars_per_kwh: float) -> None:
        """Take the constant (>= 0)."""
        self._core = _carbon.constant(dollars_per_kwh, "$/kWh")


class CsvElectricityPrice(ElectricityPriceProvider):
    """Hourly prices from a CSV with columns ``time`` (UTC) and ``value``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Read the file (errors name the line)."""
        self._core = _carbon.csv(path, "$/kWh")


@dataclass
class EnergyCostMeasurement:
    """Time, energy (J) and electricity cost ($) of one window, per device."""

    time: float
    gpu_energy: dict[int, float]
    gpu_energy_cost: dict[int, float] | None
    cpu_energy: dict[int, float] | None = None
    cpu_energy_cost: dict[int, float] | None = None
    dram_energy: dict[int, float] | None = None
    dram_energy_cost: dict[int, float] | None = None
    hours: list[tuple[int, float, float | None]] = field(default_factory=list)
    """(UTC hour start, joules in that hour, $/kWh or None) per hour."""
    error: str | None = None
    """Why there is no cost (the provider failed); None when there is."""


class EnergyCostMonitor(HourlyRateWindows):
    """Measures windows like ``ZeusMonitor`` and prices them in dollars.

    Args:
        electricity_price_provider: An :class:`ElectricityPriceProvider`.
        gpu_indices: GPUs to measure. None: all.
        cpu_indices: CPU packages to measure. None: all readable.
        sync_execution_with: As for ``ZeusMonitor``.
    """

    def __init__(
        self,
        electricity_price_provider: ElectricityPriceProvider,
        gpu_indices: Sequence[int] | None = None,
        cpu_indices: Sequence[int] | None = None,
        sync_execution_with: SyncWith = "torch",
    ) -> None:
        """Start the monitor (see the class docstring)."""
        super().__init__(electricity_price_provider._core, gpu_indices, cpu_indices, sync_execution_with)
        self.electricity_price_provider = electricity_price_provider

    def end_window(self, key: str, sync_execution: bool = True) -> EnergyCostMeasurement:
        """End window ``key`` and return its energy and cost."""
        r = self._end(key, sync_execution)
        return EnergyCostMeasurement(
            time=r["time"],
            gpu_energy=r["gpu_energy"],
            gpu_energy_cost=r["gpu"],
            cpu_energy=r["cpu_energy"],
            cpu_energy_cost=r["cpu"],
            dram_energy=r["dram_energy"],
            dram_energy_cost=r["dram"],
            hours=r["hours"],
            error=r["error"],
        )
