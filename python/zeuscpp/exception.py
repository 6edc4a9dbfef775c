"""Exceptions raised by zeuscpp.

Every error of the C++ library carries a code (``zeus::ErrorCode``); it is
raised as the class :func:`error_class_for_code` names, with the library's
message unchanged and the code name in ``.code``. The classes derive from the
Python Zeus's exception names wherever upstream has one for that failure, and
from the built-in exception upstream raised in that place (``ValueError`` for
bad arguments and unknown window names, ``PermissionError`` for missing
privileges...), so ``except`` clauses written for the Python Zeus keep working.

Hierarchy (thrown classes marked with the code they carry)::

    ZeusBaseError
    +-- ZeusBaseGPUError: ZeusGPUInitError, ZeusGPUInvalidArgError, ZeusGPUNotSupportedError,
    |   ZeusGPUNoPermissionError, ZeusGPUNotFoundError, ZeusGPUDriverNotLoadedError,
    |   ZeusGPUTimeoutError, ZeusGPULostError [gpu_lost], ZeusGPUHeterogeneousError,
    |   ZeusGPUUnknownError, ... (all upstream names)
    +-- ZeusBaseCPUError: ZeusCPUInitError, ZeusCPUNoPermissionError, ZeusCPUNotFoundError
    +-- ZeusInvalidArgumentError [invalid_argument]  (ZeusGPUInvalidArgError, ValueError)
    |   +-- ZeusParseError [parse]
    +-- ZeusNotSupportedError [not_supported]        (ZeusGPUNotSupportedError)
    +-- ZeusNoPermissionError [no_permission]        (ZeusGPU/CPUNoPermissionError, PermissionError)
    +-- ZeusNotFoundError [not_found]                (ZeusGPU/CPUNotFoundError, ValueError)
    +-- ZeusAlreadyExistsError [already_exists]      (ValueError)
    +-- ZeusFailedPreconditionError [failed_precondition] (RuntimeError)
    +-- ZeusDriverNotLoadedError [driver_not_loaded] (ZeusGPUDriverNotLoadedError, ZeusGPUInitError)
    +-- ZeusTimeoutError [timeout]                   (ZeusGPUTimeoutError, TimeoutError)
    +-- ZeusIOError [io]                             (OSError)
    +-- ZeusHeterogeneousError [heterogeneous]       (ZeusGPUHeterogeneousError, ValueError)
    +-- ZeusResourceExhaustedError [resource_exhausted] (RuntimeError; a quota or capacity: retry later)
    +-- ZeusInternalError [internal]                 (RuntimeError)
    +-- ZeusUnknownError [unknown]                   (ZeusGPUUnknownError)
"""

from __future__ import annotations

__all__ = [
    "ZeusBaseError",
    "ZeusResourceExhaustedError",
    "ZeusBaseGPUError",
    "ZeusBaseCPUError",
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
    "ZeusCPUInitError",
    "ZeusCPUNoPermissionError",
    "ZeusCPUNotFoundError",
    "ZeusInvalidArgumentError",
    "ZeusParseError",
    "ZeusNotSupportedError",
    "ZeusNoPermissionError",
    "ZeusNotFoundError",
    "ZeusAlreadyExistsError",
    "ZeusFailedPreconditionError",
    "ZeusDriverNotLoadedError",
    "ZeusTimeoutError",
    "ZeusIOError",
    "ZeusHeterogeneousError",
    "ZeusInternalError",
    "ZeusUnknownError",
    "error_class_for_code",
]


class ZeusBaseError(Exception):
    """Base of every zeuscpp exception (upstream ``zeus.exception.ZeusBaseError``).

    Attributes:
        message: What went wrong and what to do, as the library wrote it.
        code: The library's error code name (e.g. ``"invalid_argument"``); ``None``
            for exceptions raised by Python code of this package.
    """

    code: str | None = None

    def __init__(self, message: str) -> None:
        """Store the message."""
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        """Return the message."""
        return self.message


# ---- upstream names (zeus.device.exception, zeus.device.gpu, zeus.device.cpu) ----


class ZeusBaseGPUError(ZeusBaseError):
    """Base of GPU errors (upstream name)."""


class ZeusBaseCPUError(ZeusBaseError):
    """Base of CPU errors (upstream name)."""


class ZeusGPUInitError(ZeusBaseGPUError):
    """No GPU library could be loaded or initialized (upstream name)."""


class ZeusGPUInvalidArgError(ZeusBaseGPUError):
    """An invalid argument (upstream name)."""


class ZeusGPUNotSupportedError(ZeusBaseGPUError):
    """The GPU or backend cannot do this (upstream name)."""


class ZeusGPUNoPermissionError(ZeusBaseGPUError):
    """Missing privileges for a GPU operation (upstream name)."""


class ZeusGPUAlreadyInitializedError(ZeusBaseGPUError):
    """Already initialized (upstream name; not raised by zeuscpp)."""


class ZeusGPUNotFoundError(ZeusBaseGPUError):
    """No such GPU or object (upstream name)."""


class ZeusGPUInsufficientSizeError(ZeusBaseGPUError):
    """A buffer was too small (upstream name; not raised by zeuscpp)."""


class ZeusGPUInsufficientPowerError(ZeusBaseGPUError):
    """Insufficient external power (upstream name; not raised by zeuscpp)."""


class ZeusGPUDriverNotLoadedError(ZeusBaseGPUError):
    """The GPU driver is not loaded (upstream name)."""


class ZeusGPUTimeoutError(ZeusBaseGPUError):
    """A GPU call timed out (upstream name)."""


class ZeusGPUIRQError(ZeusBaseGPUError):
    """An interrupt-request problem (upstream name; not raised by zeuscpp)."""


class ZeusGPULibraryNotFoundError(ZeusBaseGPUError):
    """The GPU library was not found (upstream name; zeuscpp raises ZeusDriverNotLoadedError)."""


class ZeusGPUFunctionNotFoundError(ZeusBaseGPUError):
    """A library function is missing (upstream name; not raised by zeuscpp)."""


class ZeusGPUCorruptedInfoROMError(ZeusBaseGPUError):
    """Corrupted infoROM (upstream name; not raised by zeuscpp)."""


class ZeusGPULostError(ZeusBaseGPUError):
    """The GPU fell off the bus or needs a reset (upstream name; raised for code gpu_lost)."""


class ZeusGPUResetRequiredError(ZeusBaseGPUError):
    """The GPU needs a reset (upstream name; zeuscpp raises ZeusGPULostError)."""


class ZeusGPUOperatingSystemError(ZeusBaseGPUError):
    """The operating system blocked the request (upstream name; not raised by zeuscpp)."""


class ZeusGPULibRMVersionMismatchError(ZeusBaseGPUError):
    """Driver/library version mismatch (upstream name; not raised by zeuscpp)."""


class ZeusGPUMemoryError(ZeusBaseGPUError):
    """Out of memory in the GPU library (upstream name; not raised by zeuscpp)."""


class ZeusGPUUnknownError(ZeusBaseGPUError):
    """An unknown GPU library error (upstream name)."""


class ZeusGPUHeterogeneousError(ZeusBaseGPUError):
    """GPUs that must be identical are not (upstream name)."""


class ZeusCPUInitError(ZeusBaseCPUError):
    """CPU energy measurement could not be initialized (upstream name)."""


class ZeusCPUNoPermissionError(ZeusBaseCPUError):
    """Missing privileges for reading CPU energy (upstream name)."""


class ZeusCPUNotFoundError(ZeusBaseCPUError):
    """No such CPU package (upstream name)."""


# ---- what zeuscpp raises: one class per library error code ----


class ZeusInvalidArgumentError(ZeusGPUInvalidArgError, ValueError):
    """Bad input from the caller: a parameter, an index, a file's content (code invalid_argument)."""


class ZeusParseError(ZeusInvalidArgumentError):
    """Malformed file content (code parse)."""


class ZeusNotSupportedError(ZeusGPUNotSupportedError):
    """The device or backend cannot do this; an explicit outcome, never a zero (code not_supported)."""


class ZeusNoPermissionError(ZeusGPUNoPermissionError, ZeusCPUNoPermissionError, PermissionError):
    """The OS or driver refused: privileges needed, or go through zeusd (code no_permission)."""


class ZeusNotFoundError(ZeusGPUNotFoundError, ZeusCPUNotFoundError, ValueError):
    """No such window, device or file (code not_found)."""


class ZeusAlreadyExistsError(ZeusBaseError, ValueError):
    """A duplicate, e.g. a window that is already running (code already_exists)."""


class ZeusFailedPreconditionError(ZeusBaseError, RuntimeError):
    """The object is in the wrong state for this call (code failed_precondition)."""


class ZeusDriverNotLoadedError(ZeusGPUDriverNotLoadedError, ZeusGPUInitError):
    """The vendor driver or library is missing (code driver_not_loaded)."""


class ZeusTimeoutError(ZeusGPUTimeoutError, TimeoutError):
    """An operation timed out (code timeout)."""


class ZeusIOError(ZeusBaseError, OSError):
    """A file-system or OS call failed (code io)."""


class ZeusHeterogeneousError(ZeusGPUHeterogeneousError, ValueError):
    """Devices that must match do not (code heterogeneous)."""


class ZeusResourceExhaustedError(ZeusBaseError, RuntimeError):
    """A quota of the caller or the capacity of a service is used up; retry later (code resource_exhausted)."""


class ZeusInternalError(ZeusBaseError, RuntimeError):
    """A bug in zeuscpp; please report it (code internal)."""


class ZeusUnknownError(ZeusGPUUnknownError):
    """A vendor error the library does not map (code unknown)."""


_BY_CODE: dict[str, type[ZeusBaseError]] = {
    "invalid_argument": ZeusInvalidArgumentError,
    "not_supported": ZeusNotSupportedError,
    "no_permission": ZeusNoPermissionError,
    "not_found": ZeusNotFoundError,
    "already_exists": ZeusAlreadyExistsError,
    "failed_precondition": ZeusFailedPreconditionError,
    "driver_not_loaded": ZeusDriverNotLoadedError,
    "gpu_lost": ZeusGPULostError,
    "timeout": ZeusTimeoutError,
    "io": ZeusIOError,
    "parse": ZeusParseError,
    "heterogeneous": ZeusHeterogeneousError,
    "resource_exhausted": ZeusResourceExhaustedError,
    "internal": ZeusInternalError,
    "unknown": ZeusUnknownError,
}


def error_class_for_code(code: str) -> type[ZeusBaseError]:
    """The exception class raised for a library error code (``ZeusInternalError`` if unmapped)."""
    return _BY_CODE.get(code, ZeusInternalError)
