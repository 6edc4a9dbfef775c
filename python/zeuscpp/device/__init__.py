"""The device layer (upstream ``zeus.device``): GPUs and CPU packages of this process.

Devices are discovered once, on first use, and shared by every monitor and
optimizer of the process. The GPU backend comes from ``ZEUS_GPU_BACKEND``
(``auto``: NVML when the driver is there; ``nvml``; ``sim``: simulated GPUs;
``none``); CPU packages from Linux RAPL (``ZEUS_POWERCAP_ROOT``); a Jetson
board through ``get_soc()`` (``ZeusSoCInitError`` elsewhere, as upstream).
"""

from __future__ import annotations

from zeuscpp.device.cpu import CPUs, CpuDramMeasurement, get_cpus
from zeuscpp.device.gpu import GPUs, SimulatedGPU, get_gpus
from zeuscpp.device.soc import get_soc
from zeuscpp._core import device as _device

__all__ = [
    "get_gpus",
    "get_cpus",
    "get_soc",
    "GPUs",
    "CPUs",
    "CpuDramMeasurement",
    "SimulatedGPU",
    "environment_report",
    "notes",
]


def environment_report() -> dict:
    """What ``zeus show-env --json`` reports (versions, backends, GPU index mapping, RAPL zones)."""
    return _device.environment_report()


def notes() -> list[str]:
    """Plain-language notes from device discovery (a missing driver, unreadable RAPL, ...)."""
    return _device.notes()
