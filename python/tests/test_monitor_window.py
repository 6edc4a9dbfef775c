"""monitor.window(name) blocks, the measure() decorator and monitor.running(name).

Energies come from the fake NVML library's counters, moved by hand between
the edges, so each window's joules are known exactly.
"""

from __future__ import annotations

import pickle
import threading

import pytest

from zeuscpp.exception import ZeusAlreadyExistsError, ZeusNotFoundError
from zeuscpp.monitor import Measurement, MeasurementWindow, ZeusMonitor, measure


class Boom(Exception):
    pass


def test_a_block_is_a_window_and_keeps_its_measurement(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    with monitor.window("epoch") as w:
        assert isinstance(w, MeasurementWindow)
        assert w.measurement is None and monitor.window_running("epoch")
        fake_nvml.advance_energy_mj(0, 2500)
    assert not monitor.window_running("epoch")
    assert w.measurement.gpu_energy == {0: pytest.approx(2.5)}
    assert w.measurement.interrupted_by is None
    assert "interrupted_by" not in repr(w.measurement)


def test_a_block_that_raises_still_ends_its_window_and_says_so(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    with pytest.raises(Boom):
        with monitor.window("epoch") as w:
            fake_nvml.advance_energy_mj(0, 700)
            raise Boom("diverged")
    assert not monitor.window_running("epoch")  # ended, not leaked
    m = w.measurement
    assert m.gpu_energy == {0: pytest.approx(0.7)}
    assert m.interrupted_by == "Boom('diverged')"
    assert "interrupted_by=\"Boom('diverged')\"" in repr(m)
    # The flag survives pickling; an ordinary measurement pickles as before.
    again = pickle.loads(pickle.dumps(m))
    assert again.interrupted_by == "Boom('diverged')" and again.gpu_energy == m.gpu_energy
    # A KeyboardInterrupt (Ctrl-C) ends it too.
    with pytest.raises(KeyboardInterrupt):
        with monitor.window("epoch") as w2:
            raise KeyboardInterrupt
    assert w2.measurement.interrupted_by == "KeyboardInterrupt()"
    assert not monitor.window_running("epoch")


def test_the_blocks_exception_wins_when_the_window_cannot_end(fake_nvml, caplog):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    with pytest.raises(Boom):
        with monitor.window("w") as w:
            monitor.reset_windows()  # the window is gone before the block ends
            raise Boom()
    assert w.measurement is None
    assert any("could not be ended" in r.getMessage() for r in caplog.records)
    # Without an exception, the failure to end is the error.
    with pytest.raises(ZeusNotFoundError):
        with monitor.window("w"):
            monitor.reset_windows()


def test_blocks_nest_and_overlap_with_named_windows(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    monitor.begin_window("named")
    with monitor.window("outer") as outer:
        fake_nvml.advance_energy_mj(0, 1000)
        with monitor.window("inner") as inner:
            fake_nvml.advance_energy_mj(0, 2000)
            overlap = monitor.window("overlap").begin()  # outlives "inner"
        fake_nvml.advance_energy_mj(0, 4000)
        named = monitor.end_window("named")  # a named window ends inside the block
    fake_nvml.advance_energy_mj(0, 8000)
    overlap.end()
    assert inner.measurement.gpu_energy == {0: pytest.approx(2.0)}
    assert outer.measurement.gpu_energy == {0: pytest.approx(7.0)}
    assert named.gpu_energy == {0: pytest.approx(7.0)}
    assert overlap.measurement.gpu_energy == {0: pytest.approx(12.0)}
    # Same name twice at once: as begin_window, ValueError.
    with monitor.window("dup"):
        with pytest.raises(ZeusAlreadyExistsError):
            with monitor.window("dup"):
                pass
    with pytest.raises(RuntimeError):
        MeasurementWindow(monitor, "never").end()
    with pytest.raises(TypeError):
        monitor.window(3)


def test_running_reads_an_open_window_without_ending_it(fake_nvml, tmp_path):
    log = tmp_path / "log.csv"
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None, log_file=log)
    with monitor.window("epoch") as w:
        fake_nvml.advance_energy_mj(0, 1500)
        so_far = monitor.running("epoch")
        assert isinstance(so_far, Measurement) and so_far.gpu_energy == {0: pytest.approx(1.5)}
        assert monitor.window_running("epoch")
        fake_nvml.advance_energy_mj(0, 500)
        assert w.running().gpu_energy == {0: pytest.approx(2.0)}
        assert w.running().time >= so_far.time
    assert w.measurement.gpu_energy == {0: pytest.approx(2.0)}
    with pytest.raises(ZeusNotFoundError):
        monitor.running("epoch")
    with pytest.raises(ValueError):  # what upstream-style except clauses catch
        monitor.running("nope")
    rows = log.read_text().splitlines()
    assert len(rows) == 2 and rows[1].split(",")[1] == "epoch"  # header + the ended window only


def test_running_syncs_only_when_asked(fake_nvml):
    calls = []
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=lambda: calls.append(1))
    monitor.begin_window("w", sync_execution=False)
    monitor.running("w")
    assert calls == []
    monitor.running("w", sync_execution=True)
    assert calls == [1]
    monitor.end_window("w", sync_execution=False)


def test_measure_decorator(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    seen = []

    @measure(monitor, "step", on_measurement=seen.append)
    def step(mj, fail=False):
        """Docs survive."""
        fake_nvml.advance_energy_mj(0, mj)
        if fail:
            raise Boom()
        return mj * 2

    assert step.__name__ == "step" and step.__doc__ == "Docs survive."
    assert step.last_measurement is None
    assert step(300) == 600
    assert step.last_measurement.gpu_energy == {0: pytest.approx(0.3)}
    with pytest.raises(Boom):
        step(100, fail=True)
    assert not monitor.window_running("step")
    assert step.last_measurement.gpu_energy == {0: pytest.approx(0.1)}
    assert step.last_measurement.interrupted_by == "Boom()"
    assert [m.gpu_energy[0] for m in seen] == pytest.approx([0.3, 0.1])

    @measure(monitor)
    def unnamed():
        assert monitor.window_running("test_measure_decorator.<locals>.unnamed")

    unnamed()


def test_measure_decorator_recursion_and_threads(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    names = []

    @measure(monitor, "rec", on_measurement=lambda m: names.append(m.gpu_energy[0]))
    def rec(depth):
        fake_nvml.advance_energy_mj(0, 1000)
        assert monitor.window_running("rec")
        if depth:
            assert rec(depth - 1) is None
            assert monitor.window_running("rec")
        if depth == 0:
            assert monitor.window_running("rec#3")

    rec(2)
    # Innermost first: 1 J, then 2 J (its own + the inner call's), then 3 J.
    assert names == pytest.approx([1.0, 2.0, 3.0])
    assert not any(monitor.window_running(n) for n in ("rec", "rec#2", "rec#3"))

    gate = threading.Barrier(3)

    @measure(monitor, "threaded")
    def work():
        gate.wait(timeout=10)  # three calls of the same function run at once
        gate.wait(timeout=10)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not any(monitor.window_running(n) for n in ("threaded", "threaded#2", "threaded#3"))
    assert work.last_measurement is not None

    with pytest.raises(TypeError):

        @measure(monitor, "async")
        async def coro():
            pass
