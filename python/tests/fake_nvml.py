"""Scripting the fake libnvidia-ml.so.1 that the C++ tests build, from Python.

ctypes loads the same file the NVML backend dlopens, so both share one copy of
the fake's state (as tests/fakes/nvml/fake_nvml_control.h does for C++).
"""

from __future__ import annotations

import ctypes
import os


def fake_nvml_path() -> str:
    path = os.environ.get("ZEUSCPP_FAKE_NVML")
    if not path or not os.path.exists(path):
        raise RuntimeError("ZEUSCPP_FAKE_NVML must name the built fake libnvidia-ml.so.1 (run through ctest)")
    return path


class FakeNvml:
    """Control functions of the fake NVML (see fake_nvml_control.h for the defaults)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or fake_nvml_path()
        self.lib = ctypes.CDLL(self.path)
        c_uint, c_int, c_ull = ctypes.c_uint, ctypes.c_int, ctypes.c_ulonglong
        self.lib.fakeNvmlGetPowerLimit.restype = c_uint
        self.lib.fakeNvmlGetPersistence.restype = c_int
        self.lib.fakeNvmlCallCount.restype = c_uint
        self.lib.fakeNvmlSetEnergy.argtypes = [c_uint, c_ull]
        self.lib.fakeNvmlAdvanceEnergy.argtypes = [c_uint, c_ull]

    def reset(self) -> None:
        self.lib.fakeNvmlReset()

    def set_device_count(self, n: int) -> None:
        assert self.lib.fakeNvmlSetDeviceCount(ctypes.c_uint(n)) == 0

    def set_name(self, i: int, name: str) -> None:
        self.lib.fakeNvmlSetName(ctypes.c_uint(i), name.encode())

    def set_architecture(self, i: int, arch: int) -> None:
        self.lib.fakeNvmlSetArchitecture(ctypes.c_uint(i), ctypes.c_uint(arch))

    def set_energy_mj(self, i: int, mj: int) -> None:
        self.lib.fakeNvmlSetEnergy(i, mj)

    def advance_energy_mj(self, i: int, mj: int) -> None:
        self.lib.fakeNvmlAdvanceEnergy(i, mj)

    def set_power_mw(self, i: int, instant: int, average: int, memory: int) -> None:
        self.lib.fakeNvmlSetPower(*(ctypes.c_uint(v) for v in (i, instant, average, memory)))

    def set_power_limits(self, i: int, min_mw: int, max_mw: int, default_mw: int, current_mw: int) -> None:
        self.lib.fakeNvmlSetPowerLimits(*(ctypes.c_uint(v) for v in (i, min_mw, max_mw, default_mw, current_mw)))

    def power_limit_mw(self, i: int) -> int:
        return self.lib.fakeNvmlGetPowerLimit(ctypes.c_uint(i))

    def persistence(self, i: int) -> bool:
        return self.lib.fakeNvmlGetPersistence(ctypes.c_uint(i)) == 1

    def set_permission_denied(self, denied: bool) -> None:
        self.lib.fakeNvmlSetPermissionDenied(ctypes.c_int(1 if denied else 0))

    def set_lost(self, i: int, lost: bool) -> None:
        self.lib.fakeNvmlSetLost(ctypes.c_uint(i), ctypes.c_int(1 if lost else 0))

    def fail_always(self, function: str, result: int) -> None:
        self.lib.fakeNvmlFailAlways(function.encode(), ctypes.c_int(result))

    def set_call_delay(self, function: str, microseconds: int) -> None:
        self.lib.fakeNvmlSetCallDelay(function.encode(), ctypes.c_uint(microseconds))

    def call_count(self, function: str) -> int:
        return self.lib.fakeNvmlCallCount(function.encode())
