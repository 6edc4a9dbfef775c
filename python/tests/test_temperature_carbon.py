"""TemperatureMonitor, CarbonEmissionMonitor and EnergyCostMonitor from Python."""

from __future__ import annotations

import http.server
import os
import threading
import time

import pytest

from zeuscpp.exception import ZeusInvalidArgumentError
from zeuscpp.monitor import TemperatureMonitor
from zeuscpp.monitor.carbon import (
    CarbonEmissionMonitor,
    ConstantCarbonIntensity,
    CsvCarbonIntensity,
    ElectrictyMapsClient,
)
from zeuscpp.monitor.price import ConstantElectricityPrice, EnergyCostMonitor, OpenEIClient

SOURCE_DIR = os.environ.get(
    "ZEUSCPP_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
)
FIXTURES = os.path.join(SOURCE_DIR, "tests", "unit", "monitor", "carbon", "fixtures")


def test_temperature_timeline_and_nearest_sample(fake_nvml):
    fake_nvml.set_temperature(0, 51)
    t0 = time.time()
    monitor = TemperatureMonitor(update_period=0.01)
    time.sleep(0.05)
    fake_nvml.set_temperature(0, 64)
    # Sampled every 10 ms; a loaded machine may delay the next sample, so
    # wait for it (bounded) rather than for a fixed time.
    deadline = time.time() + 10.0
    while monitor.get_temperature()[0] != 64.0 and time.time() < deadline:
        time.sleep(0.01)
    assert monitor.gpu_indices == [0, 1]
    assert monitor.get_temperature()[0] == 64.0
    assert monitor.get_temperature(t0)[0] == 51.0
    timeline = monitor.get_temperature_timeline(gpu_index=0)
    assert list(timeline) == [0]
    assert [c for _, c in timeline[0]][0] == 51.0
    assert all(t0 - 0.01 <= ts <= time.time() for ts, _ in timeline[0])
    monitor.stop()
    monitor.stop()
    with pytest.raises(ZeusInvalidArgumentError):
        TemperatureMonitor(gpu_indices=[7])
    with pytest.raises(ValueError):
        TemperatureMonitor(update_period=0)


def test_constant_carbon_and_price_on_the_simulated_gpu():
    carbon = CarbonEmissionMonitor(ConstantCarbonIntensity(400.0), sync_execution_with=None)
    cost = EnergyCostMonitor(ConstantElectricityPrice(0.25), sync_execution_with=None)
    carbon.begin_window("w")
    cost.begin_window("w")
    time.sleep(0.1)
    c = carbon.end_window("w")
    p = cost.end_window("w")
    assert c.error is None and p.error is None
    kwh = c.gpu_energy[0] / 3.6e6
    assert c.gpu_carbon_emission[0] == pytest.approx(kwh * 400.0, rel=1e-3)
    assert p.gpu_energy_cost[0] == pytest.approx(p.gpu_energy[0] / 3.6e6 * 0.25, rel=1e-3)
    assert c.cpu_energy is None and c.cpu_carbon_emission is None
    assert c.hours and c.hours[-1][2] == 400.0
    with pytest.raises(ValueError):
        carbon.begin_window("x")
        carbon.begin_window("x")
    with pytest.raises(ValueError):
        ConstantCarbonIntensity(-1.0)


def test_provider_failure_keeps_the_energy(tmp_path):
    rates = tmp_path / "rates.csv"
    rates.write_text("time,value\n2001-01-01T00:00:00Z,100\n")
    monitor = CarbonEmissionMonitor(CsvCarbonIntensity(rates), sync_execution_with=None)
    monitor.begin_window("w")
    m = monitor.end_window("w")
    assert m.gpu_energy[0] >= 0.0
    assert m.gpu_carbon_emission is None
    assert "has no value for the hour" in m.error


class _Fixtures(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0]
        name = {
            "/v3/carbon-intensity/latest": "electricitymaps_latest.json",
            "/v3/carbon-intensity/history": "electricitymaps_history.json",
            "/utility_rates": "openei_utility_rates.json",
        }.get(path)
        if name is None:
            self.send_error(404)
            return
        body = open(os.path.join(FIXTURES, name), "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def provider_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fixtures)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_electricity_maps_and_openei_clients_over_loopback(provider_server, monkeypatch):
    client = ElectrictyMapsClient((37.87, -122.26), base_url=provider_server)
    assert client.get_carbon_intensity(1714564800) == 300.0  # 2024-05-01T12:00Z from the history
    monkeypatch.setenv("OPENEI_API_KEY", "test-key")
    tariff = OpenEIClient((37.87, -122.26), "5a1b2c3d4e5f60718293a4b5", base_url=provider_server,
                          utc_offset_hours=-7)
    assert tariff.get_electricity_price(1714604400) == pytest.approx(0.49)  # weekday 16:00 PDT
    with pytest.raises(ZeusInvalidArgumentError):
        ElectrictyMapsClient((95.0, 0.0))
