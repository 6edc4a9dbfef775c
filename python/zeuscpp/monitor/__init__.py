"""Time, energy and power monitors (upstream ``zeus.monitor``).

:class:`ZeusMonitor` measures the time and energy of named windows
(``monitor.window(name)`` and the :func:`measure` decorator make them blocks
and function calls);
:class:`PowerMonitor` samples power in a background C++ thread into timelines;
:class:`TemperatureMonitor` does the same for GPU temperatures. Carbon
emissions and electricity cost: :mod:`zeuscpp.monitor.carbon` and
:mod:`zeuscpp.monitor.price`.
"""

from zeuscpp.monitor.energy import Measurement, MeasurementWindow, ZeusMonitor, measure
from zeuscpp.monitor.power import PowerDomain, PowerMonitor
from zeuscpp.monitor.temperature import TemperatureMonitor

__all__ = [
    "ZeusMonitor",
    "Measurement",
    "MeasurementWindow",
    "measure",
    "PowerMonitor",
    "PowerDomain",
    "TemperatureMonitor",
]
