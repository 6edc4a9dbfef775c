"""System-on-chip boards (upstream ``zeus.device.soc``): NVIDIA Jetson.

A Jetson's CPU, GPU and module-input rails are measured by the library when
``ZeusMonitor`` runs on one (found in sysfs; ``ZEUS_JETSON_SYSFS_ROOT`` points
elsewhere for tests); each window's ``Measurement.soc_energy`` is then a
:class:`~zeuscpp.device.soc.jetson.JetsonMeasurement`. Apple Silicon needs
macOS and is not supported. ``get_soc()`` gives upstream's SoC object for
windows of the board alone.
"""

from __future__ import annotations

import threading

from zeuscpp.device.soc.common import SoC, SoCMeasurement, ZeusBaseSoCError, ZeusSoCInitError
from zeuscpp.device.soc.jetson import Jetson, JetsonMeasurement, ZeusJetsonInitError, jetson_is_available

__all__ = [
    "get_soc",
    "SoC",
    "SoCMeasurement",
    "ZeusBaseSoCError",
    "ZeusSoCInitError",
    "Jetson",
    "JetsonMeasurement",
    "ZeusJetsonInitError",
    "jetson_is_available",
]

_soc: SoC | None = None
_soc_lock = threading.Lock()


def get_soc() -> SoC:
    """This machine's board (a :class:`Jetson`), made once per process.

    Raises:
        ZeusSoCInitError: no board the library can measure (upstream's
            behaviour; Apple Silicon needs macOS and is never found here).
    """
    global _soc
    with _soc_lock:
        if _soc is None:
            if not jetson_is_available():
                raise ZeusSoCInitError("No observable SoC was found on the current machine.")
            _soc = Jetson()
        return _soc
