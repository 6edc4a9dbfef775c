"""Device helpers at upstream's path (``zeus.device.common``)."""

from __future__ import annotations

import ctypes
import logging

__all__ = ["has_sys_admin"]

logger = logging.getLogger(__name__)

_CAP_SYS_ADMIN = 21
_STATUS = "/proc/self/status"


def has_sys_admin() -> bool:
    """Whether this process has the SYS_ADMIN capability (needed to change GPU settings without zeusd).

    Reads the effective capability mask from ``/proc/self/status``; where that
    cannot be read, asks the kernel with ``capget(2)``. False when neither works.
    """
    try:
        with open(_STATUS) as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> _CAP_SYS_ADMIN & 1)
    except (OSError, ValueError, IndexError):
        logger.info("could not read capabilities from %s", _STATUS, exc_info=True)
    return _capget_sys_admin()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    version: int
    pid: int


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
    effective: int
    permitted: int
    inheritable: int


def _capget_sys_admin() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        data = (_CapData * 2)()  # version 3 takes two 32-bit words
        if libc.capget(ctypes.byref(header), data) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return bool(data[0].effective >> _CAP_SYS_ADMIN & 1)
