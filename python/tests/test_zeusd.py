"""zeuscpp and zeusd: a real zeusd (bin/zeusd serving simulated GPUs) driven
through zeuscpp.utils.zeusd (upstream's ZeusdClient API) and through
zeuscpp's device layer with ZEUSD_SOCK_PATH set; settings changed by this
process are restored by zeusd when its connection goes away."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from conftest import _fresh_devices, write_powercap
from zeuscpp._core import device as _device
from zeuscpp.monitor.power_streaming import PowerReadings


def _serve(sock, env, *args):
    """Starts zeusd and returns once its socket exists: zeusd puts the socket
    in place only when it accepts connections (docs/zeusd.md)."""
    proc = subprocess.Popen([os.environ["ZEUSCPP_ZEUSD"], "serve", "--socket-path", str(sock), *args], env=env)
    deadline = time.monotonic() + 20
    while not sock.exists():
        assert proc.poll() is None, f"zeusd exited with {proc.returncode} before serving"
        assert time.monotonic() < deadline, "zeusd did not put its socket in place within 20 s"
        time.sleep(0.01)
    return proc


@pytest.fixture
def zeusd_cpu(tmp_path):
    """A zeusd serving one RAPL package with DRAM (a scripted powercap tree) and no GPU API."""
    sock = tmp_path / "zeusd-cpu.sock"
    root = tmp_path / "powercap"
    write_powercap(root, 5_000_000, 2_000_000)
    env = dict(os.environ, ZEUS_SIM_GPUS="1", ZEUS_POWERCAP_ROOT=str(root), ZEUS_LOG_LEVEL="warn")
    env.pop("ZEUSD_SOCK_PATH", None)
    proc = _serve(sock, env, "--gpu-backend", "sim", "--enable", "cpu-read")
    yield str(sock)
    proc.terminate()
    assert proc.wait(timeout=10) == 0


def test_zeusd_cpu_reads_are_typed_and_capabilities_checked(zeusd_cpu):
    from zeuscpp.utils.zeusd import (
        CpuDramPower,
        CpuEnergyResult,
        ZeusdCapabilityError,
        ZeusdClient,
        ZeusdConfig,
        require_capabilities,
    )

    client = ZeusdClient(ZeusdConfig.uds(zeusd_cpu))
    assert client.cpu_ids == [0] and client.dram_available == [True]
    assert client.get_cpu_energy() == {0: CpuEnergyResult(cpu_energy_uj=5_000_000, dram_energy_uj=2_000_000)}
    assert client.get_cpu_energy([0], dram=False)[0].dram_energy_uj is None
    power = client.get_cpu_power([0])
    assert power.power_mw == {0: CpuDramPower(cpu_mw=0, dram_mw=0)}  # the counters do not move
    assert abs(power.timestamp_ms / 1000 - time.time()) < 5
    require_capabilities(client, read_cpu=True, cpu_ids=[0])
    with pytest.raises(ZeusdCapabilityError) as info:
        require_capabilities(client, read_cpu=True, control_gpu=True, cpu_ids=[0, 3])
    message = str(info.value)
    assert "'gpu-control' is not enabled" in message and "CPU ids [3] are not served" in message


def test_unreachable_zeusd_is_a_connection_error(tmp_path):
    from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig, ZeusdConnectionError

    with pytest.raises(ZeusdConnectionError, match="zeusd|socket|connect"):
        ZeusdClient(ZeusdConfig.uds(str(tmp_path / "nobody.sock")))


@pytest.fixture
def zeusd(tmp_path):
    sock = tmp_path / "zeusd.sock"
    env = dict(os.environ, ZEUS_SIM_GPUS="2", ZEUS_POWERCAP_ROOT=str(tmp_path / "no-powercap"), ZEUS_LOG_LEVEL="warn")
    env.pop("ZEUSD_SOCK_PATH", None)
    proc = _serve(sock, env, "--gpu-backend", "sim", "--enable", "gpu-control,gpu-read")
    yield str(sock)
    proc.terminate()
    assert proc.wait(timeout=10) == 0


def test_zeusd_client(zeusd):
    from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig, ZeusdError

    client = ZeusdClient(ZeusdConfig.uds(zeusd))
    assert client.gpu_ids == [0, 1]
    assert client.gpus[0].name == "Zeus Simulated GPU"
    assert client.can_control_gpu and client.can_read_gpu and not client.can_read_cpu
    assert client.get_power_limit_constraints([1]) == {1: (100000, 300000)}
    client.set_power_limit([0, 1], 150000)
    assert client.get_power_limit() == {0: 150000, 1: 150000}
    assert len(client.lease_id) == 32  # our extension: the change is leased
    snapshot = client.get_gpu_power()
    assert set(snapshot.power_mw) == {0, 1} and abs(snapshot.timestamp_ms / 1000 - time.time()) < 5
    assert abs(client.get_time() - time.time()) < 5
    with pytest.raises(ValueError) as info:  # below the minimum: the daemon's 400
        client.set_power_limit([0], 1)
    assert isinstance(info.value, ZeusdError)  # upstream's class too
    del info  # its traceback holds the client
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


def _first(client, accept, timeout=20.0):
    """The first snapshot from iterating the client that `accept` takes; fails after `timeout` s.

    The iteration runs in its own thread so that an iterator that never
    yields fails this test by name instead of hanging the suite."""
    found = []

    def look():
        for readings in client:
            if accept(readings):
                found.append(readings)
                return

    thread = threading.Thread(target=look, daemon=True)
    thread.start()
    thread.join(timeout)
    assert found, f"no accepted snapshot within {timeout} s; the latest readings: {client.get_power()}"
    return found[0]


def test_iterating_after_the_readings_arrived_yields_them(zeusd):
    """The daemon sends an idle GPU's power once; readings stored before the
    iteration begins must still give a snapshot (a wait for the next change
    would block forever: the simulator's power does not change)."""
    from zeuscpp.monitor.power_streaming import PowerStreamingClient
    from zeuscpp.utils.zeusd import ZeusdConfig

    client = PowerStreamingClient([ZeusdConfig.uds(zeusd)])
    try:
        deadline = time.monotonic() + 20
        while set(client.get_power().get(zeusd, PowerReadings()).gpu_power_w) != {0, 1}:
            assert time.monotonic() < deadline, client.get_power()
            time.sleep(0.01)
        readings = _first(client, lambda r: True, timeout=5)
        assert set(readings[zeusd].gpu_power_w) == {0, 1}
    finally:
        client.stop()


def test_power_streaming_client_streams_gpu_power(zeusd):
    import asyncio

    from zeuscpp.monitor.power_streaming import PowerStreamingClient
    from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig

    client = PowerStreamingClient([ZeusdConfig.uds(zeusd)])
    try:
        readings = _first(client, lambda r: set(r.get(zeusd, PowerReadings()).gpu_power_w) == {0, 1})
        node = readings[zeusd]
        assert all(w == pytest.approx(300.0, rel=0.2) for w in node.gpu_power_w.values())  # the simulator idles at 300 W
        assert abs(node.timestamp_s - time.time()) < 5 and node.cpu_power_w == {}
        copy = client.get_power()
        copy[zeusd].gpu_power_w.clear()
        assert set(client.get_power()[zeusd].gpu_power_w) == {0, 1}  # snapshots are copies

        # The daemon sends a GPU's power when it changes: a lower limit lowers the simulator's.
        async def until_gpu0_is_capped():
            asyncio.get_running_loop().call_later(0.3, control.set_power_limit, [0], 150000)
            async for r in client:
                if r[zeusd].gpu_power_w[0] <= 150.0:
                    return r

        control = ZeusdClient(ZeusdConfig.uds(zeusd))
        capped = asyncio.run(asyncio.wait_for(until_gpu0_is_capped(), 20))
        assert capped[zeusd].gpu_power_w[0] == pytest.approx(150.0) and capped[zeusd].gpu_power_w[1] > 150.0
        ended = threading.Event()
        threading.Thread(target=lambda: (list(client), ended.set()), daemon=True).start()
    finally:
        client.stop()
    assert ended.wait(5), "iteration did not end at stop()"


def test_power_streaming_client_chooses_devices(zeusd, zeusd_cpu):
    from zeuscpp.monitor.power_streaming import CpuPowerReading, PowerStreamingClient
    from zeuscpp.utils.zeusd import ZeusdCapabilityError, ZeusdConfig

    with pytest.raises(ValueError, match="once"):
        PowerStreamingClient([ZeusdConfig.uds(zeusd), ZeusdConfig.uds(zeusd)])
    with pytest.raises(ValueError, match=r"GPU ids \[5\]"):
        PowerStreamingClient([ZeusdConfig.uds(zeusd, gpu_indices=[5])])
    with pytest.raises(ZeusdCapabilityError, match="gpu_indices"):
        PowerStreamingClient([ZeusdConfig.uds(zeusd_cpu, gpu_indices=[0])])  # gpu-read not enabled there
    # Two daemons: GPU 1 only from one, the CPU (and no GPU: not readable) from the other.
    client = PowerStreamingClient([ZeusdConfig.uds(zeusd, gpu_indices=[1]), ZeusdConfig.uds(zeusd_cpu)])
    try:
        readings = _first(client, lambda r: zeusd in r and zeusd_cpu in r)
        assert set(readings[zeusd].gpu_power_w) == {1}
        cpu = readings[zeusd_cpu]
        assert cpu.gpu_power_w == {} and cpu.cpu_power_w == {0: CpuPowerReading(cpu_w=0.0, dram_w=0.0)}
    finally:
        client.stop()
