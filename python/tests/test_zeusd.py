"""zeuscpp and zeusd: a real zeusd (bin/zeusd serving simulated GPUs) driven
through zeuscpp.utils.zeusd (upstream's ZeusdClient API) and through
zeuscpp's device layer with ZEUSD_SOCK_PATH set; settings changed by this
process are restored by zeusd when its connection goes away."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import _fresh_devices
from zeuscpp._core import device as _device


@pytest.fixture
def zeusd(tmp_path):
    sock = tmp_path / "zeusd.sock"
    env = dict(os.environ, ZEUS_SIM_GPUS="2", ZEUS_POWERCAP_ROOT=str(tmp_path / "no-powercap"), ZEUS_LOG_LEVEL="warn")
    env.pop("ZEUSD_SOCK_PATH", None)
    proc = subprocess.Popen(
        [os.environ["ZEUSCPP_ZEUSD"], "serve", "--socket-path", str(sock), "--gpu-backend", "sim",
         "--enable", "gpu-control,gpu-read"],
        env=env,
    )
    for _ in range(500):
        if sock.exists():
            break
        time.sleep(0.01)
    yield str(sock)
    proc.terminate()
    assert proc.wait(timeout=10) == 0


def test_zeusd_client(zeusd):
    from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig

    client = ZeusdClient(ZeusdConfig.uds(zeusd))
    assert client.gpu_ids == [0, 1]
    assert client.gpus[0].name == "Zeus Simulated GPU"
    assert client.can_control_gpu and client.can_read_gpu and not client.can_read_cpu
    assert client.get_power_limit_constraints([1]) == {1: (100000, 300000)}
    client.set_power_limit([0, 1], 150000)
    assert client.get_power_limit() == {0: 150000, 1: 150000}
    assert len(client.lease_id) == 32  # our extension: the change is leased
    assert set(client.get_gpu_power()) == {0, 1}
    assert abs(client.get_time() - time.time()) < 5
    with pytest.raises(ValueError):  # below the minimum: the daemon's 400
        client.set_power_limit([0], 1)
    del client  # the connection closes: zeusd restores the limits
    check = ZeusdClient(ZeusdConfig.uds(zeusd))
    for _ in range(100):
        if check.get_power_limit() == {0: 300000, 1: 300000}:
            break
        time.sleep(0.01)
    assert check.get_power_limit() == {0: 300000, 1: 300000}


def test_device_layer_goes_through_zeusd(zeusd, monkeypatch):
    _fresh_devices(monkeypatch, ZEUS_GPU_BACKEND="zeusd", ZEUSD_SOCK_PATH=zeusd)
    from zeuscpp.device import environment_report, get_gpus

    gpus = get_gpus()
    assert len(gpus) == 2
    gpus.set_power_management_limit(1, 200000)
    assert gpus.get_power_management_limit(1) == 200000
    report = environment_report()
    assert report["gpu_backend"] == "zeusd"
    assert report["zeusd"]["endpoint"] == zeusd
    assert report["zeusd"]["enabled_api_groups"] == ["gpu-control", "gpu-read"]
    _device._reset_devices()
