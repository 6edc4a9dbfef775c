from zeuscpp.exception import (
    ZeusBaseGPUError as ZeusBaseGPUError,
    ZeusGPUAlreadyInitializedError as ZeusGPUAlreadyInitializedError,
    ZeusGPUCorruptedInfoROMError as ZeusGPUCorruptedInfoROMError,
    ZeusGPUDriverNotLoadedError as ZeusGPUDriverNotLoadedError,
    ZeusGPUFunctionNotFoundError as ZeusGPUFunctionNotFoundError,
    ZeusGPUHeterogeneousError as ZeusGPUHeterogeneousError,
    ZeusGPUInitError as ZeusGPUInitError,
    ZeusGPUInsufficientPowerError as ZeusGPUInsufficientPowerError,
    ZeusGPUInsufficientSizeError as ZeusGPUInsufficientSizeError,
    ZeusGPUInvalidArgError as ZeusGPUInvalidArgError,
    ZeusGPUIRQError as ZeusGPUIRQError,
    ZeusGPULibraryNotFoundError as ZeusGPULibraryNotFoundError,
    ZeusGPULibRMVersionMismatchError as ZeusGPULibRMVersionMismatchError,
    ZeusGPULostError as ZeusGPULostError,
    ZeusGPUMemoryError as ZeusGPUMemoryError,
    ZeusGPUNoPermissionError as ZeusGPUNoPermissionError,
    ZeusGPUNotFoundError as ZeusGPUNotFoundError,
    ZeusGPUNotSupportedError as ZeusGPUNotSupportedError,
    ZeusGPUOperatingSystemError as ZeusGPUOperatingSystemError,
    ZeusGPUResetRequiredError as ZeusGPUResetRequiredError,
    ZeusGPUTimeoutError as ZeusGPUTimeoutError,
    ZeusGPUUnknownError as ZeusGPUUnknownError,
)

__all__ = [
    "get_gpus",
    "GPUs",
    "SimulatedGPU",
    "ZeusBaseGPUError",
    "ZeusGPUInitError",
    "ZeusGPUInvalidArgError",
    "ZeusGPUNotSupportedError",
    "ZeusGPUNoPermissionError",
    "ZeusGPUAlreadyInitializedError",
    "ZeusGPUNotFoundError",
    "ZeusGPUInsufficientSizeError",
    "ZeusGPUInsufficientPowerError",
    "ZeusGPUDriverNotLoadedError",
    "ZeusGPUTimeoutError",
    "ZeusGPUIRQError",
    "ZeusGPULibraryNotFoundError",
    "ZeusGPUFunctionNotFoundError",
    "ZeusGPUCorruptedInfoROMError",
    "ZeusGPULostError",
    "ZeusGPUResetRequiredError",
    "ZeusGPUOperatingSystemError",
    "ZeusGPULibRMVersionMismatchError",
    "ZeusGPUMemoryError",
    "ZeusGPUUnknownError",
    "ZeusGPUHeterogeneousError",
]

class SimulatedGPU:
    """Controls of a simulated GPU."""

    def execute(self, work_units: float) -> float:
        """Runs work at full load; returns the seconds taken."""
    def set_load(self, load: float) -> None:
        """Sets the utilization in [0, 1]."""
    @property
    def load(self) -> float:
        """Current utilization."""
    @property
    def throughput(self) -> float:
        """Current work rate (units per second)."""
    def true_energy(self) -> float:
        """Energy (J) the model used since creation."""

class GPUs:
    """The GPUs this process can see (index first; mW, mJ, MHz, degrees Celsius)."""

    def __len__(self) -> int: ...
    @property
    def backend(self) -> str:
        """'nvml', 'sim' or 'none'."""
    @property
    def physical_indices(self) -> list[int]:
        """NVML (or simulator) index of each GPU."""
    def get_name(self, gpu_index: int) -> str: ...
    def get_uuid(self, gpu_index: int) -> str: ...
    def get_architecture(self, gpu_index: int) -> str: ...
    def get_power_management_limit_constraints(self, gpu_index: int) -> tuple[int, int]: ...
    def get_power_management_limit(self, gpu_index: int) -> int: ...
    def get_default_power_management_limit(self, gpu_index: int) -> int: ...
    def set_power_management_limit(self, gpu_index: int, power_limit_mw: int, block: bool = True) -> None: ...
    def reset_power_management_limit(self, gpu_index: int, block: bool = True) -> None: ...
    def get_persistence_mode(self, gpu_index: int) -> bool: ...
    def set_persistence_mode(self, gpu_index: int, enabled: bool, block: bool = True) -> None: ...
    def get_supported_memory_clocks(self, gpu_index: int) -> list[int]: ...
    def get_supported_graphics_clocks(self, gpu_index: int, memory_clock_mhz: int | None = None) -> list[int]: ...
    def set_gpu_locked_clocks(
        self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True
    ) -> None: ...
    def reset_gpu_locked_clocks(self, gpu_index: int, block: bool = True) -> None: ...
    def set_memory_locked_clocks(
        self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True
    ) -> None: ...
    def reset_memory_locked_clocks(self, gpu_index: int, block: bool = True) -> None: ...
    def reset_locked_clocks(self, gpu_index: int, block: bool = True) -> None: ...
    def get_instant_power_usage(self, gpu_index: int) -> int: ...
    def get_average_power_usage(self, gpu_index: int) -> int: ...
    def get_average_memory_power_usage(self, gpu_index: int) -> int: ...
    def supports_get_total_energy_consumption(self, gpu_index: int) -> bool: ...
    def get_total_energy_consumption(self, gpu_index: int) -> float: ...
    def get_gpu_temperature(self, gpu_index: int) -> float: ...
    def simulated(self, gpu_index: int) -> SimulatedGPU: ...

def get_gpus(ensure_homogeneous: bool = False) -> GPUs:
    """The process's GPU manager."""
