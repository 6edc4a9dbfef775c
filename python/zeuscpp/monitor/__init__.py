"""Time, energy and power monitors (upstream ``zeus.monitor``).

:class:`ZeusMonitor` measures the time and energy of named windows;
:class:`PowerMonitor` samples power in a background C++ thread into timelines.
"""

from zeuscpp.monitor.energy import Measurement, ZeusMonitor
from zeuscpp.monitor.power import PowerDomain, PowerMonitor

__all__ = ["ZeusMonitor", "Measurement", "PowerMonitor", "PowerDomain"]
