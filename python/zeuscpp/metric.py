"""Pushgateway metrics (upstream ``zeus.metric``): ``EnergyHistogram``,
``EnergyCumulativeCounter`` and ``PowerGauge``.

The same metric names (``energy_monitor_{gpu,cpu,dram}_energy_joules``,
``power_monitor_gpu_power_watts``), labels (``window``, ``index``), bucket
defaults and push (``PUT <url>/metrics/job/<job>``) as the Python Zeus, so its
dashboards keep working. The counter and the gauge run a background thread per
window in the library instead of a spawned process. See docs/zeusd.md.
"""

from __future__ import annotations

from zeuscpp._parts import core_part

_metric = core_part("zeuscpp.metric", "metric", "the HTTP layer (Pushgateway pushes)")

EnergyHistogram = _metric.EnergyHistogram
EnergyCumulativeCounter = _metric.EnergyCumulativeCounter
PowerGauge = _metric.PowerGauge

__all__ = ["EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"]
