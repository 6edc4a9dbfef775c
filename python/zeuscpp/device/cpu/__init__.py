"""CPU packages (upstream ``zeus.device.cpu``): the RAPL manager and the CPU exception names."""

from __future__ import annotations

from zeuscpp._core import device as _device
from zeuscpp.exception import (
    ZeusBaseCPUError,
    ZeusCPUInitError,
    ZeusCPUNoPermissionError,
    ZeusCPUNotFoundError,
)

__all__ = [
    "get_cpus",
    "CPUs",
    "CpuDramMeasurement",
    "ZeusBaseCPUError",
    "ZeusCPUInitError",
    "ZeusCPUNoPermissionError",
    "ZeusCPUNotFoundError",
]

CPUs = _device.CPUs
CpuDramMeasurement = _device.CpuDramMeasurement


def get_cpus() -> CPUs:
    """The process's CPU manager: RAPL packages it can read (empty without powercap)."""
    return _device.get_cpus()
