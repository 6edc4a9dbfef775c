"""ZeusMonitor and Measurement against the fake NVML library and the simulated GPU."""

from __future__ import annotations

import csv
import logging
import threading
import time

import pytest

from conftest import write_powercap
from zeuscpp.exception import (
    ZeusAlreadyExistsError,
    ZeusBaseError,
    ZeusInvalidArgumentError,
    ZeusNotFoundError,
)
from zeuscpp.monitor import Measurement, ZeusMonitor


def test_window_energy_is_the_counter_difference(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    assert monitor.gpu_indices == [0, 1]
    monitor.begin_window("step")
    fake_nvml.advance_energy_mj(0, 1500)
    fake_nvml.advance_energy_mj(1, 250)
    m = monitor.end_window("step")
    assert m.gpu_energy == {0: 1.5, 1: 0.25}
    assert m.total_energy == pytest.approx(1.75)
    assert m.cpu_energy is None and m.dram_energy is None
    assert m.time > 0
    assert m.gpu_energy_source == {0: "counter", 1: "counter"}


def test_windows_nest_and_overlap(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[1], sync_execution_with=None)
    monitor.begin_window("outer")
    fake_nvml.advance_energy_mj(1, 1000)
    monitor.begin_window("inner")
    fake_nvml.advance_energy_mj(1, 2000)
    assert monitor.end_window("outer").gpu_energy == {1: 3.0}
    fake_nvml.advance_energy_mj(1, 4000)
    assert monitor.end_window("inner").gpu_energy == {1: 6.0}


def test_unknown_and_duplicate_windows_raise_value_errors(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    with pytest.raises(ZeusNotFoundError, match="no measurement window named 'nope'") as info:
        monitor.end_window("nope")
    assert isinstance(info.value, ValueError) and info.value.code == "not_found"
    monitor.begin_window("a")
    with pytest.raises(ValueError, match="already running") as info:
        monitor.begin_window("a")
    assert isinstance(info.value, ZeusAlreadyExistsError)
    monitor.begin_window("a", restart=True)  # upstream's restart
    monitor.end_window("a")
    assert not monitor.window_running("a")


def test_cancel_returns_zeros_and_logs_nothing(fake_nvml, tmp_path):
    log = tmp_path / "sub" / "windows.csv"
    monitor = ZeusMonitor(log_file=log, sync_execution_with=None)
    monitor.begin_window("dropped")
    fake_nvml.advance_energy_mj(0, 5000)
    m = monitor.end_window("dropped", cancel=True)
    assert m.time == 0 and m.gpu_energy == {0: 0.0, 1: 0.0}
    monitor.begin_window("kept")
    fake_nvml.advance_energy_mj(0, 2000)
    monitor.end_window("kept")
    rows = list(csv.reader(log.open()))
    assert rows[0] == ["start_time", "window_name", "elapsed_time", "gpu0_energy", "gpu1_energy"]
    assert [r[1] for r in rows[1:]] == ["kept"]
    assert float(rows[1][3]) == pytest.approx(2.0)
    assert float(rows[1][0]) == pytest.approx(time.time(), abs=60)  # wall-clock start


def test_reset_windows_drops_every_window(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    monitor.begin_window("a")
    monitor.begin_window("b")
    monitor.reset_windows()
    with pytest.raises(ValueError):
        monitor.end_window("a")


def test_short_window_is_flagged_and_warned_not_silent(fake_nvml, caplog):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    monitor.begin_window("short")
    with caplog.at_level(logging.WARNING, logger="zeuscpp"):
        m = monitor.end_window("short")
    assert m.gpu_energy == {0: 0.0}
    assert m.gpus_below_update_period == [0]
    assert any("did not move" in r.getMessage() for r in caplog.records)


def test_approx_instant_energy_uses_instant_power(fake_nvml):
    fake_nvml.set_power_mw(0, 200000, 150000, 30000)
    monitor = ZeusMonitor(gpu_indices=[0], approx_instant_energy=True, sync_execution_with=None)
    monitor.begin_window("short")
    time.sleep(0.05)
    m = monitor.end_window("short")
    assert m.gpu_energy_source == {0: "instant_power_approx"}
    assert m.gpu_energy[0] == pytest.approx(200.0 * m.time, rel=1e-6)


def test_pre_volta_gpu_is_served_by_the_power_timeline(fake_nvml):
    fake_nvml.set_architecture(0, 4)  # Pascal: no energy counter
    fake_nvml.set_power_mw(0, 100000, 100000, 0)
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    monitor.begin_window("w")
    time.sleep(0.2)
    m = monitor.end_window("w")
    assert m.gpu_energy_source == {0: "power_timeline"}
    assert m.gpu_energy[0] == pytest.approx(100.0 * m.time, rel=0.05)


def test_sync_callable_runs_before_reads_only_when_asked(fake_nvml):
    calls = []
    monitor = ZeusMonitor(sync_execution_with=lambda: calls.append(1))
    monitor.begin_window("a")
    monitor.end_window("a")
    monitor.begin_window("b", sync_execution=False)
    monitor.end_window("b", sync_execution=False)
    assert len(calls) == 2


def test_sync_callable_errors_reach_the_caller(fake_nvml):
    def broken():
        raise KeyError("framework broke")

    monitor = ZeusMonitor(sync_execution_with=broken)
    with pytest.raises(KeyError, match="framework broke"):
        monitor.begin_window("a")
    assert not monitor.window_running("a")


def test_torch_sync_is_a_no_op_on_cpu_only_torch(fake_nvml):
    import torch

    assert not torch.cuda.is_available()
    monitor = ZeusMonitor()  # default "torch"
    monitor.begin_window("a")
    fake_nvml.advance_energy_mj(0, 1000)
    assert monitor.end_window("a").gpu_energy[0] == 1.0
    assert monitor.sync_with == "torch"


@pytest.mark.parametrize("framework", ["jax", "cupy"])
def test_frameworks_that_are_not_installed_have_nothing_to_sync(fake_nvml, framework):
    import importlib.util

    from zeuscpp.utils.framework import sync_function

    assert importlib.util.find_spec(framework) is None, f"{framework} is installed here"
    # Nothing to wait for (not an import error at the first window), and the
    # windows still measure.
    assert sync_function(framework, [0]) is None
    monitor = ZeusMonitor(sync_execution_with=framework)
    assert monitor.sync_with == framework
    monitor.begin_window("a")
    fake_nvml.advance_energy_mj(1, 2500)
    m = monitor.end_window("a")
    assert m.gpu_energy == {0: 0.0, 1: 2.5}


def test_a_monitor_of_nothing_warns_why_and_its_windows_say_they_are_empty(monkeypatch, tmp_path):
    from conftest import _fresh_devices

    _fresh_devices(monkeypatch, ZEUS_GPU_BACKEND="none", ZEUS_POWERCAP_ROOT=str(tmp_path / "none"))
    with pytest.warns(RuntimeWarning, match=r"nothing to measure: no GPU \(GPU backend 'none'\)"):
        monitor = ZeusMonitor(sync_execution_with=None)
    monitor.begin_window("a")
    m = monitor.end_window("a")
    assert m.is_empty and m.gpu_energy == {} and m.total_energy == 0
    # Asking for a GPU that is not there says why there is none.
    with pytest.raises(ZeusInvalidArgumentError, match="GPU index 0 does not exist: no GPU is available"):
        ZeusMonitor(gpu_indices=[0], sync_execution_with=None)


def test_a_monitor_with_devices_is_not_empty_and_does_not_warn(recwarn):
    monitor = ZeusMonitor(sync_execution_with=None)  # one simulated GPU
    monitor.begin_window("a")
    assert not monitor.end_window("a").is_empty
    assert not [w for w in recwarn if "nothing to measure" in str(w.message)]


def test_bad_arguments_raise_typed_errors(fake_nvml):
    with pytest.raises(ZeusInvalidArgumentError, match="GPU index 7 does not exist: 2 GPU"):
        ZeusMonitor(gpu_indices=[7], sync_execution_with=None)
    with pytest.raises(ValueError, match="given twice"):
        ZeusMonitor(gpu_indices=[0, 0], sync_execution_with=None)
    with pytest.raises(ValueError, match="sync_execution_with must be"):
        ZeusMonitor(sync_execution_with="tensorflow")
    with pytest.raises(TypeError):
        ZeusMonitor(gpu_indices="0", sync_execution_with=None)
    with pytest.raises(TypeError):
        ZeusMonitor(gpu_indices=[0.5], sync_execution_with=None)
    monitor = ZeusMonitor(sync_execution_with=None)
    with pytest.raises(TypeError):
        monitor.begin_window(42)
    with pytest.raises(ZeusBaseError):
        ZeusMonitor(log_file="/proc/definitely/not/writable.csv", sync_execution_with=None)


def test_several_python_threads_measure_at_once(fake_nvml):
    """Each thread's windows measure the counter between their own begin and end.

    A feeder thread moves GPU 0's counter one millijoule at a time and counts
    what it fed; every window's energy must lie between what was fed strictly
    inside it and what was fed around it. A monitor that mixed up the windows
    of different threads (a begin reading stored under the wrong name, or one
    shared slot) breaks those bounds.
    """
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    # A window is otherwise over in about a microsecond, too short for the
    # feeder to be scheduled inside one; a 0.2 ms "driver" read (with the GIL
    # released, as for the real driver) gives it room in every window.
    fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 200)
    errors: list[BaseException] = []
    bounds: list[tuple[int, int, float]] = []
    fed = 0
    stop = threading.Event()

    def feeder() -> None:
        nonlocal fed
        while not stop.is_set():
            fake_nvml.advance_energy_mj(0, 1)
            fed += 1

    def worker(k: int) -> None:
        try:
            for i in range(200):
                name = f"t{k}-{i}"
                before_begin = fed
                monitor.begin_window(name)
                after_begin = fed
                before_end = fed
                m = monitor.end_window(name)
                after_end = fed
                # fed lags the counter by at most the one advance in flight.
                bounds.append((before_end - after_begin - 1, after_end + 1 - before_begin,
                               m.gpu_energy[0] * 1000))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    feed = threading.Thread(target=feeder)
    feed.start()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    feed.join()
    fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 0)
    assert not errors
    assert len(bounds) == 800
    outside = [(lo, hi, got) for lo, hi, got in bounds if not lo - 1e-6 <= got <= hi + 1e-6]
    assert not outside, f"{len(outside)} windows measured outside their own bounds: {outside[:5]}"
    assert fed > 0 and any(got > 0 for _, _, got in bounds), "the feeder never ran inside a window"


def test_counter_reads_release_the_gil(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 300_000)  # 0.3 s per read
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        time.sleep(0.05)
        before = ticks
        monitor.begin_window("slow")  # blocks 0.3 s in the "driver"
        during = ticks - before
    finally:
        stop.set()
        spinner.join()
        fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 0)
    # With the GIL held for 0.3 s the spinner could not have run at all (beyond
    # the switch interval); released, it counts freely.
    assert during > 10_000


def test_reads_that_turn_slow_release_the_gil_again(fake_nvml):
    # Fast reads are made with the GIL held (releasing it would cost more than
    # the read); one call in 16 is timed with it released, so reads that turn
    # slow get the GIL released again within a few calls.
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    for _ in range(100):
        monitor.begin_window("w")
        monitor.end_window("w")
    fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 20_000)  # 20 ms per read
    try:
        for _ in range(10):
            monitor.begin_window("w")
            monitor.end_window("w")
        ticks = 0
        stop = threading.Event()

        def spin() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1

        spinner = threading.Thread(target=spin)
        spinner.start()
        try:
            time.sleep(0.05)
            before = ticks
            for _ in range(5):
                monitor.begin_window("w")
                monitor.end_window("w")
            during = ticks - before
        finally:
            stop.set()
            spinner.join()
    finally:
        fake_nvml.set_call_delay("nvmlDeviceGetTotalEnergyConsumption", 0)
    assert during > 10_000


def test_a_window_measurement_builds_its_dicts_once_and_keeps_edits(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0, 1], sync_execution_with=None)
    monitor.begin_window("w")
    m = monitor.end_window("w")
    assert m.gpu_energy is m.gpu_energy and set(m.gpu_energy) == {0, 1}
    assert m.cpu_energy is None and m.dram_energy is None
    m.gpu_energy[0] = 7.0
    assert m.gpu_energy[0] == 7.0 and m.total_energy == 7.0 + m.gpu_energy[1]
    m.interrupted_by = "KeyboardInterrupt()"
    import pickle

    again = pickle.loads(pickle.dumps(m))
    assert again == m and again.interrupted_by == "KeyboardInterrupt()"
    with pytest.raises(TypeError):
        m.gpu_energy = [1.0]


def test_measurement_is_a_dataclass_like_value():
    m = Measurement(time=2.0, gpu_energy={0: 10.0, 1: 5.0}, cpu_energy={0: 3.0})
    assert m.total_energy == 15.0  # GPUs only, as upstream
    assert m.total_device_energy == 18.0
    m.gpu_energy[0] = 1.0
    assert m.total_energy == 6.0
    assert m == Measurement(2.0, {0: 1.0, 1: 5.0}, {0: 3.0})
    assert "gpu_energy={0: 1.0, 1: 5.0}" in repr(m)
    import pickle

    assert pickle.loads(pickle.dumps(m)) == m


def test_simulated_gpu_energy_matches_the_model():
    from zeuscpp.device import get_gpus

    monitor = ZeusMonitor(sync_execution_with=None)
    sim = get_gpus().simulated(0)
    before = sim.true_energy()
    monitor.begin_window("work")
    seconds = sim.execute(5.0)
    m = monitor.end_window("work")
    assert m.time >= seconds
    assert m.gpu_energy[0] == pytest.approx(sim.true_energy() - before, rel=0.02)


def test_cpu_and_dram_energy_from_a_powercap_tree(monkeypatch, tmp_path):
    from zeuscpp._core import device as _device

    root = tmp_path / "powercap"
    write_powercap(root, 1_000_000, 500_000)
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root))
    _device._reset_devices()
    monitor = ZeusMonitor(cpu_indices=[0], sync_execution_with=None)
    assert monitor.cpu_indices == [0]
    monitor.begin_window("w")
    write_powercap(root, 3_500_000, 1_250_000)
    m = monitor.end_window("w")
    assert m.cpu_energy == {0: pytest.approx(2.5)}
    assert m.dram_energy == {0: pytest.approx(0.75)}
    assert m.total_device_energy == pytest.approx(m.total_energy + 3.25)
    with pytest.raises(ValueError, match="CPU package index 3 does not exist"):
        ZeusMonitor(cpu_indices=[3], sync_execution_with=None)
