"""HFEnergyCallback: joules per logging step in the entries a Trainer hands its reporters.

Driven through fake_transformers, a model of Trainer's callback protocol
(order of callbacks, when on_log runs, what log_history keeps), on the fake
NVML library whose energy counters the steps move by known amounts.
"""

from __future__ import annotations

import importlib
import sys

import pytest

import fake_transformers as ft
from zeuscpp.monitor import ZeusMonitor


@pytest.fixture
def hf(monkeypatch):
    """zeuscpp.monitor.huggingface imported with the fake transformers installed."""
    ft.install(monkeypatch)
    monkeypatch.delitem(sys.modules, "zeuscpp.monitor.huggingface", raising=False)
    module = importlib.import_module("zeuscpp.monitor.huggingface")
    yield module
    sys.modules.pop("zeuscpp.monitor.huggingface", None)  # the next import sees the real environment


def run(trainer, fake_nvml, steps=6):
    def step(i):  # GPU 0: (i+1) * 100 mJ per step; GPU 1: 1 J per step
        fake_nvml.advance_energy_mj(0, (i + 1) * 100)
        fake_nvml.advance_energy_mj(1, 1000)
        return 10.0 - i

    trainer.train(steps, step)


def test_reporters_receive_each_windows_joules_beside_loss(hf, fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0, 1], sync_execution_with=None)
    reporter = ft.Reporter()
    trainer = ft.Trainer(ft.TrainingArguments(logging_steps=2), reporters=[reporter])
    callback = hf.HFEnergyCallback(monitor).attach(trainer)
    assert isinstance(callback, ft.TrainerCallback)
    assert trainer.callback_handler.callbacks[0] is callback
    run(trainer, fake_nvml)

    written = reporter.written
    assert [w.get("loss") for w in written] == [9.0, 7.0, 5.0, None]  # three logging steps, the summary
    assert [w["step"] for w in written] == [2, 4, 6, 6]
    # Steps 1-2, 3-4, 5-6 on GPU 0: 0.1+0.2, 0.3+0.4, 0.5+0.6 J; GPU 1: 2 J per window.
    for w, gpu0 in zip(written, [0.3, 0.7, 1.1, 0.0]):
        gpu1 = 2.0 if "loss" in w else 0.0
        assert w["energy_gpu0_j"] == pytest.approx(gpu0)
        assert w["energy_gpu1_j"] == pytest.approx(gpu1)
        assert w["energy_total_j"] == pytest.approx(gpu0 + gpu1)
        assert w["energy_time_s"] >= 0.0
    # The saved history has the energy too, entry for entry.
    assert [h.get("energy_total_j") for h in trainer.state.log_history] == [w["energy_total_j"] for w in written]
    assert callback.last.gpu_energy == {0: pytest.approx(0.0), 1: pytest.approx(0.0)}
    assert not monitor.window_running(callback.window_key)  # on_train_end dropped the open window


def test_attach_puts_it_ahead_of_reporters_passed_before_it(hf, fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    callback = hf.HFEnergyCallback(monitor, prefix="zeus")
    # As Trainer(callbacks=[callback], report_to=...) builds it: reporters first.
    late, reporter = ft.Reporter(), ft.Reporter()
    trainer = ft.Trainer(ft.TrainingArguments(logging_steps=3), reporters=[reporter], callbacks=[callback, late])
    run(trainer, fake_nvml)
    assert not any("zeus_total_j" in w for w in reporter.written)  # why attach() exists
    assert late.written[0]["zeus_gpu0_j"] == pytest.approx(0.6)

    reporter2 = ft.Reporter()
    trainer2 = ft.Trainer(ft.TrainingArguments(logging_steps=3), reporters=[reporter2], callbacks=[callback])
    assert callback.attach(trainer2).attach(trainer2) is callback
    assert trainer2.callback_handler.callbacks.count(callback) == 1
    assert trainer2.callback_handler.callbacks[0] is callback
    run(trainer2, fake_nvml)
    # A second train() starts a fresh window: steps 1-3 again, not the gap in between.
    assert [w.get("zeus_gpu0_j") for w in reporter2.written] == [
        pytest.approx(0.6), pytest.approx(1.5), pytest.approx(0.0)]
    assert "energy_total_j" not in reporter2.written[0]


def test_a_log_outside_training_starts_measuring(hf, fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    callback = hf.HFEnergyCallback(monitor)
    logs = {"eval_loss": 1.0}
    callback.on_log(None, ft.TrainerState(), ft.TrainerControl(), logs=logs)
    assert logs == {"eval_loss": 1.0}
    fake_nvml.advance_energy_mj(0, 250)
    callback.on_log(None, ft.TrainerState(), ft.TrainerControl(), logs=logs)
    assert logs["energy_gpu0_j"] == pytest.approx(0.25)


def test_needs_transformers(monkeypatch):
    try:
        import transformers  # noqa: F401
    except ImportError:
        monkeypatch.delitem(sys.modules, "zeuscpp.monitor.huggingface", raising=False)
        module = importlib.import_module("zeuscpp.monitor.huggingface")
        with pytest.raises(ImportError, match="transformers"):
            module.HFEnergyCallback(ZeusMonitor(sync_execution_with=None))
    else:  # pragma: no cover - transformers is not a Debian package
        pytest.skip("transformers is installed here")
