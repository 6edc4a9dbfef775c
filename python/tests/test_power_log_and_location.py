"""zeuscpp.utils.metric's power-log helpers and zeuscpp.utils.lat_lon.get_ip_lat_long.

The power logs are written here with values whose integrals are known by
hand; the geolocation service is a real HTTP server on loopback.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest

from zeuscpp.exception import ZeusIOError, ZeusParseError
from zeuscpp.utils.lat_lon import get_ip_lat_long
from zeuscpp.utils.metric import avg_power, energy

# 0 s: 100 W, 1 s: 200 W, 2 s: 200 W, 4 s: 0 W (Power in mW), then the footer.
LOG = """Time,Power
2022-11-07 00:33:46.000000,100000
2022-11-07 00:33:47.000000,200000
2022-11-07 00:33:48.000000,200000
2022-11-07 00:33:50.000000,0
Energy consumed: whatever the old tool wrote here
"""


def write(tmp_path, text: str):
    path = tmp_path / "power.csv"
    path.write_text(text)
    return path


def test_energy_and_average_power_of_a_power_log(tmp_path):
    log = write(tmp_path, LOG)
    # Trapezoids: 150 J + 200 J + 200 J = 550 J over 4 s.
    assert energy(log) == pytest.approx(550.0)
    assert avg_power(log) == pytest.approx(550.0 / 4)
    # start/end: seconds after the first sample; samples inside [start, end].
    assert energy(log, start=1) == pytest.approx(400.0)
    assert energy(log, end=2) == pytest.approx(350.0)
    assert energy(log, start=1, end=2) == pytest.approx(200.0)
    assert avg_power(log, start=1, end=2) == pytest.approx(200.0)
    assert energy(str(log)) == pytest.approx(550.0)  # a str path too


def test_power_log_without_footer_and_with_seconds(tmp_path):
    log = write(tmp_path, "Power,Time\n1000,10.0\n3000,11.0\n3000,13.0\n")
    assert energy(log) == pytest.approx(2.0 + 6.0)
    assert avg_power(log) == pytest.approx(8.0 / 3)


@pytest.mark.parametrize(
    "text, message",
    [
        ("Time,Watts\n0,1\n1,2\n", "Time and Power"),
        ("Time,Power\n0,1000\nnot a time,5\n1,1000\n", "malformed sample"),
        ("Time,Power\n0,1000\n", "fewer than two samples"),
        ("Time,Power\n5,1000\n1,1000\n", "goes backwards"),
        ("", "empty power log"),
    ],
)
def test_bad_power_logs_say_what_is_wrong(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        energy(write(tmp_path, text))
    with pytest.raises(ValueError):
        avg_power(write(tmp_path, text))


def test_a_range_with_one_sample_is_refused(tmp_path):
    with pytest.raises(ValueError, match="fewer than two samples"):
        energy(write(tmp_path, LOG), start=1.5, end=2.5)


class FakeIpInfo:
    """A loopback HTTP server answering every GET with one canned reply."""

    def __init__(self, status: int, body: bytes):
        outer = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                outer.requests.append(self.path)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ipinfo():
    servers = []

    def make(status=200, body=b""):
        servers.append(FakeIpInfo(status, body))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_location_from_the_geolocation_service(ipinfo, monkeypatch):
    server = ipinfo(body=json.dumps({"ip": "192.0.2.1", "loc": "42.2776,-83.7409"}).encode())
    assert get_ip_lat_long(url=server.url) == (42.2776, -83.7409)
    # The environment names the service when the argument does not.
    monkeypatch.setenv("ZEUS_IP_GEOLOCATION_URL", server.url)
    assert get_ip_lat_long() == (42.2776, -83.7409)
    assert server.requests == ["/json", "/json"]


@pytest.mark.parametrize("body", [b'{"ip": "192.0.2.1"}', b"<html>", b'{"loc": "north"}', b'{"loc": "95,10"}'])
def test_an_answer_without_a_location_is_a_parse_error(ipinfo, body):
    server = ipinfo(body=body)
    with pytest.raises(ZeusParseError, match="location yourself"):
        get_ip_lat_long(url=server.url)


def test_offline_or_refused_is_a_clear_io_error(ipinfo):
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ZeusIOError, match=r"could not get this machine's location .*offline\?") as e:
        get_ip_lat_long(url=f"http://127.0.0.1:{port}/json", timeout=2)
    assert isinstance(e.value, OSError)
    server = ipinfo(status=429, body=b'{"error": "rate limited"}')
    with pytest.raises(ZeusIOError, match="429"):
        get_ip_lat_long(url=server.url)
