# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
from zeuscpp.exception import (
    ZeusBaseCPUError as ZeusBaseCPUError,
    ZeusCPUInitError as ZeusCPUInitError,
    ZeusCPUNoPermissionError as ZeusCPUNoPermissionError,
    ZeusCPUNotFoundError as ZeusCPUNotFoundError,
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

class CpuDramMeasurement:
    cpu_mj: float
    dram_mj: float | None
    def __init__(self, cpu_mj: float, dram_mj: float | None = None) -> None: ...
    def __sub__(self, other: CpuDramMeasurement) -> CpuDramMeasurement: ...

class CPUs:
    def __len__(self) -> int: ...
    def get_total_energy_consumption(self, cpu_index: int) -> CpuDramMeasurement: ...
    def supports_get_dram_energy_consumption(self, cpu_index: int) -> bool: ...

def get_cpus() -> CPUs: ...
