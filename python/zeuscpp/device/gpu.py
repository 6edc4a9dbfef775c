"""GPUs (upstream ``zeus.device.gpu``): the GPU manager and the GPU exception names."""

from __future__ import annotations

from zeuscpp._core import device as _device
from zeuscpp.exception import (
    ZeusBaseGPUError,
    ZeusGPUAlreadyInitializedError,
    ZeusGPUCorruptedInfoROMError,
    ZeusGPUDriverNotLoadedError,
    ZeusGPUFunctionNotFoundError,
    ZeusGPUHeterogeneousError,
    ZeusGPUInitError,
    ZeusGPUInsufficientPowerError,
    ZeusGPUInsufficientSizeError,
    ZeusGPUInvalidArgError,
    ZeusGPUIRQError,
    ZeusGPULibraryNotFoundError,
    ZeusGPULibRMVersionMismatchError,
    ZeusGPULostError,
    ZeusGPUMemoryError,
    ZeusGPUNoPermissionError,
    ZeusGPUNotFoundError,
    ZeusGPUNotSupportedError,
    ZeusGPUOperatingSystemError,
    ZeusGPUResetRequiredError,
    ZeusGPUTimeoutError,
    ZeusGPUUnknownError,
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

GPUs = _device.GPUs
SimulatedGPU = _device.SimulatedGPU


def get_gpus(ensure_homogeneous: bool = False) -> GPUs:
    """The process's GPU manager (discovered on first use, then shared).

    Args:
        ensure_homogeneous: Raise ``ZeusHeterogeneousError`` (a
            ``ZeusGPUHeterogeneousError``) when the GPUs are not all the same model.
    """
    return _device.get_gpus(ensure_homogeneous)
