"""A minimal stand-in for NVIDIA's `pynvml` (nvidia-ml-py) over any
libnvidia-ml.so.1, so that the Python Zeus's own ZeusMonitor can run on the
fake NVML in bench/python_zeus_peer.py. Debian has no nvidia-ml-py, and
there is no PyPI here.

Only what the Python Zeus's NVIDIA backend calls on its measuring path is
bound. Each binding is one cached ctypes call, without the per-call lock
nvidia-ml-py takes when it looks a function up, so the peer measured through
this module is, if anything, a little faster than the real one.
"""

from __future__ import annotations

import ctypes
import os
import threading

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_ALREADY_INITIALIZED = 5
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_ERROR_INSUFFICIENT_POWER = 8
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_IRQ_ISSUE = 11
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_CORRUPTED_INFOROM = 14
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_RESET_REQUIRED = 16
NVML_ERROR_OPERATING_SYSTEM = 17
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_MEMORY = 20
NVML_ERROR_UNKNOWN = 999

NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1
NVML_TEMPERATURE_GPU = 0
NVML_DEVICE_ARCH_KEPLER = 2
NVML_DEVICE_ARCH_VOLTA = 5
NVML_FI_DEV_POWER_AVERAGE = 185
NVML_FI_DEV_POWER_INSTANT = 186
NVML_POWER_SCOPE_GPU = 0
NVML_POWER_SCOPE_MODULE = 1
NVML_POWER_SCOPE_MEMORY = 2


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


_lib = None
_lock = threading.Lock()


def _library() -> ctypes.CDLL:
    global _lib
    with _lock:
        if _lib is None:
            _lib = ctypes.CDLL(os.environ.get("ZEUS_PEER_NVML", "libnvidia-ml.so.1"))
            # The fake library's GPU count, for the Python Zeus's power-polling
            # processes: each loads the fake afresh, with its default count.
            if os.environ.get("ZEUS_PEER_GPUS"):
                _lib.fakeNvmlSetDeviceCount(ctypes.c_uint(int(os.environ["ZEUS_PEER_GPUS"])))
        return _lib


def _nvmlGetFunctionPointer(name: str):
    return getattr(_library(), name)


def _check(rc: int) -> None:
    if rc != NVML_SUCCESS:
        raise NVMLError(rc)


def nvmlInit() -> None:
    _check(_nvmlGetFunctionPointer("nvmlInit_v2")())


def nvmlShutdown() -> None:
    _check(_nvmlGetFunctionPointer("nvmlShutdown")())


def nvmlDeviceGetCount() -> int:
    count = ctypes.c_uint()
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetCount_v2")(ctypes.byref(count)))
    return count.value


def nvmlDeviceGetHandleByIndex(index: int) -> ctypes.c_void_p:
    handle = ctypes.c_void_p()
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetHandleByIndex_v2")(ctypes.c_uint(index), ctypes.byref(handle)))
    return handle


def nvmlDeviceGetName(handle) -> str:
    buffer = ctypes.create_string_buffer(96)
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetName")(handle, buffer, ctypes.c_uint(96)))
    return buffer.value.decode()


def nvmlDeviceGetArchitecture(handle) -> int:
    arch = ctypes.c_uint()
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetArchitecture")(handle, ctypes.byref(arch)))
    return arch.value


_get_energy = None


def nvmlDeviceGetTotalEnergyConsumption(handle) -> int:
    # The one call on the measuring path: bound once, like a warmed-up pynvml.
    global _get_energy
    if _get_energy is None:
        _get_energy = _nvmlGetFunctionPointer("nvmlDeviceGetTotalEnergyConsumption")
    energy = ctypes.c_ulonglong()
    _check(_get_energy(handle, ctypes.byref(energy)))
    return energy.value


def nvmlDeviceGetPowerManagementLimitConstraints(handle) -> tuple[int, int]:
    low, high = ctypes.c_uint(), ctypes.c_uint()
    fn = _nvmlGetFunctionPointer("nvmlDeviceGetPowerManagementLimitConstraints")
    _check(fn(handle, ctypes.byref(low), ctypes.byref(high)))
    return low.value, high.value


def nvmlDeviceGetPowerManagementLimit(handle) -> int:
    limit = ctypes.c_uint()
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetPowerManagementLimit")(handle, ctypes.byref(limit)))
    return limit.value


def nvmlDeviceGetPersistenceMode(handle) -> int:
    mode = ctypes.c_int()
    _check(_nvmlGetFunctionPointer("nvmlDeviceGetPersistenceMode")(handle, ctypes.byref(mode)))
    return mode.value


class c_nvmlValue_t(ctypes.Union):
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong), ("siVal", ctypes.c_int)]


class c_nvmlFieldValue_t(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", c_nvmlValue_t)]


_get_field_values = None


def nvmlDeviceGetFieldValues(handle, field_ids):
    # nvidia-ml-py's signature: field ids, or (field id, scope id) pairs; one
    # struct per field back, each with its own nvmlReturn. Bound once.
    global _get_field_values
    if _get_field_values is None:
        _get_field_values = _nvmlGetFunctionPointer("nvmlDeviceGetFieldValues")
    values = (c_nvmlFieldValue_t * len(field_ids))()
    for i, field in enumerate(field_ids):
        if isinstance(field, tuple):
            values[i].fieldId, values[i].scopeId = field
        else:
            values[i].fieldId = field
    _check(_get_field_values(handle, ctypes.c_int(len(field_ids)), values))
    return values
