"""zeuscpp.metric against a real Pushgateway (Debian's prometheus-pushgateway,
started on loopback): upstream's metric names and labels."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request

import pytest

from zeuscpp.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gateway():
    port = _free_port()
    proc = subprocess.Popen(["prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            urllib.request.urlopen(url + "/-/ready", timeout=1)
            break
        except OSError:
            time.sleep(0.025)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def _metrics(url: str) -> str:
    return urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()


def test_histogram_counter_gauge(gateway):
    h = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=gateway, job="pyhist")
    h.begin_window("step")
    time.sleep(0.1)
    h.end_window("step")
    text = _metrics(gateway)
    assert 'energy_monitor_gpu_energy_joules_count{index="0",instance="",job="pyhist",window="step"} 1' in text
    with pytest.raises(ValueError):
        EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=gateway, job="x", gpu_bucket_range=[])

    c = EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0], update_period=0.05, pushgateway_url=gateway, job="pycounter")
    g = PowerGauge(gpu_indices=[0], update_period=0.05, pushgateway_url=gateway, job="pygauge")
    c.begin_window("epoch")
    g.begin_window("epoch")
    time.sleep(0.2)
    c.end_window("epoch")
    g.end_window("epoch")
    text = _metrics(gateway)
    assert 'energy_monitor_gpu_energy_joules_total{index="0",instance="",job="pycounter",window="epoch"}' in text
    assert 'power_monitor_gpu_power_watts{index="0",instance="",job="pygauge",window="epoch"} 300' in text
