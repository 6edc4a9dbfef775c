"""Carbon emissions of measurement windows (upstream ``zeus.monitor.carbon``).

Windows are split at UTC hour boundaries by a C++ thread of this process
(upstream spawns a polling process); each hour's energy per device times that
hour's carbon intensity gives grams of CO2-equivalent. A provider that fails
keeps the energy: the emission fields are None and ``error`` says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal, Sequence

from zeuscpp._core import carbon as _carbon
from zeuscpp.monitor._hourly import HourlyRateWindows
from zeuscpp.utils.framework import SyncWith

__all__ = [
    "CarbonIntensityProvider",
    "ElectricityMapsClient",
    "ElectrictyMapsClient",
    "ConstantCarbonIntensity",
    "CsvCarbonIntensity",
    "CarbonEmissionMeasurement",
    "CarbonEmissionMonitor",
]


class CarbonIntensityProvider:
    """Where hourly carbon intensities (gCO2eq/kWh) come from."""

    _core: _carbon.RateProvider

    def get_carbon_intensity(self, hour: int) -> float:
        """gCO2eq/kWh of the UTC hour that starts at ``hour`` (Unix seconds)."""
        return self._core.rate(hour)

    def __repr__(self) -> str:
        """The provider's description."""
        return f"{type(self).__name__}({self._core.description})"


class ElectricityMapsClient(CarbonIntensityProvider):
    """The ElectricityMaps carbon-intensity API (latest value and 24 h history).

    The token is read from ``ELECTRICITYMAPS_API_TOKEN``; upstream sends none.

    Args:
        location: (latitude, longitude).
        estimate: Accept estimated values (upstream's ``estimate``).
        emission_factor_type: ``"direct"`` or ``"lifecycle"``.
    """

    def __init__(
        self,
        location: tuple[float, float],
        estimate: bool = False,
        emission_factor_type: Literal["direct", "lifecycle"] = "direct",
        base_url: str | None = None,
    ) -> None:
        """Check the arguments; nothing is fetched until a rate is needed."""
        lat, lon = location
        self._core = _carbon.electricity_maps(lat, lon, estimate, emission_factor_type, base_url)


ElectrictyMapsClient = ElectricityMapsClient
"""Upstream's (misspelt) name."""


class ConstantCarbonIntensity(CarbonIntensityProvider):
    """The same intensity every hour (no network, no key)."""

    def __init__(self, gco2eq_per_kwh: float) -> None:
        """Take the constant (>= 0)."""
        self._core = _carbon.constant(gco2eq_per_kwh, "gCO2eq/kWh")


class CsvCarbonIntensity(CarbonIntensityProvider):
    """Hourly intensities from a CSV with columns ``time`` (UTC) and ``value``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Read the file (errors name the line)."""
        self._core = _carbon.csv(path, "gCO2eq/kWh")


@dataclass
class CarbonEmissionMeasurement:
    """Time, energy (J) and carbon emissions (gCO2eq) of one window, per device."""

    time: float
    gpu_energy: dict[int, float]
    gpu_carbon_emission: dict[int, float] | None
    cpu_energy: dict[int, float] | None = None
    cpu_carbon_emission: dict[int, float] | None = None
    dram_energy: dict[int, float] | None = None
    dram_carbon_emission: dict[int, float] | None = None
    hours: list[tuple[int, float, float | None]] = field(default_factory=list)
    """(UTC hour start, joules in that hour, gCO2eq/kWh or None) per hour."""
    error: str | None = None
    """Why there are no emissions (the provider failed); None when there are."""


class CarbonEmissionMonitor(HourlyRateWindows):
    """Measures windows like ``ZeusMonitor`` and prices them in gCO2eq.

    Args:
        carbon_intensity_provider: A :class:`CarbonIntensityProvider`.
        gpu_indices: GPUs to measure. None: all.
        cpu_indices: CPU packages to measure. None: all readable.
        sync_execution_with: As for ``ZeusMonitor``.
    """

    def __init__(
        self,
        carbon_intensity_provider: CarbonIntensityProvider,
        gpu_indices: Sequence[int] | None = None,
        cpu_indices: Sequence[int] | None = None,
        sync_execution_with: SyncWith = "torch",
    ) -> None:
        """Start the monitor (see the class docstring)."""
        super().__init__(carbon_intensity_provider._core, gpu_indices, cpu_indices, sync_execution_with)
        self.carbon_intensity_provider = carbon_intensity_provider

    def end_window(self, key: str, sync_execution: bool = True) -> CarbonEmissionMeasurement:
        """End window ``key`` and return its energy and emissions."""
        r = self._end(key, sync_execution)
        return CarbonEmissionMeasurement(
            time=r["time"],
            gpu_energy=r["gpu_energy"],
            gpu_carbon_emission=r["gpu"],
            cpu_energy=r["cpu_energy"],
            cpu_carbon_emission=r["cpu"],
            dram_energy=r["dram_energy"],
            dram_carbon_emission=r["dram"],
            hours=r["hours"],
            error=r["error"],
        )
