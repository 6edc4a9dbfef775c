"""A KeyboardInterrupt while end_window synchronizes keeps the window (as upstream).

Ctrl-C lands in torch.cuda.synchronize more often than anywhere else; a script
that catches it and ends the window again must get the whole window, not a
ValueError for a window that vanished.
"""

from __future__ import annotations

import pytest

from zeuscpp.monitor import ZeusMonitor


def test_an_interrupted_sync_keeps_the_window():
    calls = []

    def sync():
        calls.append(1)
        if len(calls) == 2:  # the first end_window's sync (begin_window's was the first)
            raise KeyboardInterrupt

    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=sync)
    monitor.begin_window("epoch")
    with pytest.raises(KeyboardInterrupt):
        monitor.end_window("epoch")
    measurement = monitor.end_window("epoch")  # still running
    assert measurement.time > 0 and set(measurement.gpu_energy) == {0}
    with pytest.raises(ValueError):
        monitor.end_window("epoch")
