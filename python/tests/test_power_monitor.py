"""PowerMonitor: a C++ sampling thread, queried with time.time() timestamps."""

from __future__ import annotations

import time

import pytest

from conftest import run_python
from zeuscpp.exception import ZeusInvalidArgumentError
from zeuscpp.monitor import PowerDomain, PowerMonitor


def test_samples_scripted_power_with_wall_clock_timestamps(fake_nvml):
    fake_nvml.set_power_mw(0, 150000, 140000, 20000)
    fake_nvml.set_power_mw(1, 250000, 240000, 30000)
    t0 = time.time()
    monitor = PowerMonitor(update_period=0.01)
    time.sleep(0.15)
    t1 = time.time()
    assert monitor.gpu_indices == [0, 1]
    assert monitor.update_period == pytest.approx(0.01)
    assert monitor.measurement_domains == [PowerDomain.DEVICE_INSTANT]
    assert monitor.get_power() == {0: 150.0, 1: 250.0}
    timeline = monitor.get_power_timeline(PowerDomain.DEVICE_INSTANT)
    assert set(timeline) == {0, 1}
    for gpu, watts in ((0, 150.0), (1, 250.0)):
        assert timeline[gpu], "no samples"
        assert all(t0 - 0.01 <= ts <= t1 + 0.01 and w == watts for ts, w in timeline[gpu])
    energy = monitor.get_energy(t0 + 0.02, t1)
    assert energy == {0: pytest.approx(150.0 * (t1 - t0 - 0.02)), 1: pytest.approx(250.0 * (t1 - t0 - 0.02))}
    only_one = monitor.get_power_timeline("device_instant", gpu_index=1, start_time=t0, end_time=t1)
    assert list(only_one) == [1]
    monitor.stop()
    monitor.stop()  # idempotent
    assert monitor.get_power() == {0: 150.0, 1: 250.0}  # still queryable


def test_several_domains_and_power_changes(fake_nvml):
    fake_nvml.set_device_count(1)
    monitor = PowerMonitor(update_period=0.01, power_domains=["device_instant", PowerDomain.MEMORY_AVERAGE])
    time.sleep(0.05)
    fake_nvml.set_power_mw(0, 300000, 290000, 45000)
    time.sleep(0.05)
    timelines = monitor.get_all_power_timelines()
    assert set(timelines) == {"device_instant", "memory_average"}
    assert [w for _, w in timelines["device_instant"][0]][-1] == 300.0
    assert 120.0 in [w for _, w in timelines["device_instant"][0]]
    assert monitor.get_power(power_domain="memory_average") == {0: 45.0}
    with pytest.raises(ZeusInvalidArgumentError, match="'device_average' is not monitored"):
        monitor.get_power(power_domain=PowerDomain.DEVICE_AVERAGE)
    monitor.stop()


def test_bad_arguments(fake_nvml):
    with pytest.raises(ValueError, match="non-empty"):
        PowerMonitor(gpu_indices=[])
    with pytest.raises(ValueError, match="non-empty"):
        PowerMonitor(power_domains=[])
    with pytest.raises(ValueError, match="GPU index 9 does not exist"):
        PowerMonitor(gpu_indices=[9])
    with pytest.raises(ValueError):
        PowerMonitor(power_domains=["gpu_power"])
    with pytest.raises(ValueError, match="update period must be a positive, finite"):
        PowerMonitor(update_period=-1.0)
    # Issue 20: NaN and infinite update periods were accepted.
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="update period must be a positive, finite"):
            PowerMonitor(update_period=bad)
    with pytest.raises(ValueError, match="max_samples_per_gpu"):
        PowerMonitor(max_samples_per_gpu=0)
    monitor = PowerMonitor(update_period=0.05, gpu_indices=[0])
    with pytest.raises(ValueError, match="GPU 1 is not monitored"):
        monitor.get_power_timeline("device_instant", gpu_index=1)
    # ... and reversed or NaN time ranges read as 0 J.
    now = time.time()
    with pytest.raises(ValueError, match="ends 5 s before it starts"):
        monitor.get_energy(now, now - 5)
    with pytest.raises(ValueError, match="not finite"):
        monitor.get_energy(float("nan"), now)
    monitor.stop()


def test_unsupported_domain_is_refused(fake_nvml):
    fake_nvml.lib.fakeNvmlSetNoPowerFields(0)  # a driver without power fields
    with pytest.raises(ValueError, match="'memory' is not supported"):
        PowerMonitor(gpu_indices=[0], power_domains=["memory_average"])


def test_running_monitor_stops_cleanly_at_interpreter_exit(fake_nvml):
    # No stop(), no del: the thread must not outlive the interpreter, and the
    # process must exit at once with status 0 and no noise.
    result = run_python(
        """
        import time
        from zeuscpp.monitor import PowerMonitor, ZeusMonitor
        monitors = [PowerMonitor(update_period=0.005) for _ in range(3)]
        keep = ZeusMonitor(sync_execution_with=None)
        time.sleep(0.05)
        print("sampled", len(monitors[0].get_power_timeline("device_instant")[0]) > 0)
        """,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sampled True"
    assert result.stderr == ""
