"""System-on-chip boards (upstream ``zeus.device.soc``): NVIDIA Jetson.

A Jetson's CPU, GPU and module-input rails are measured by the library when
``ZeusMonitor`` runs on one (found in sysfs; ``ZEUS_JETSON_SYSFS_ROOT`` points
elsewhere for tests); each window's ``Measurement.soc_energy`` is then a
:class:`~zeuscpp.device.soc.jetson.JetsonMeasurement`. Apple Silicon needs
macOS and is not supported.
"""

from __future__ import annotations

from zeuscpp.device.soc.common import SoCMeasurement
from zeuscpp.device.soc.jetson import JetsonMeasurement

__all__ = ["SoCMeasurement", "JetsonMeasurement"]
