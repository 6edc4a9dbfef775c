"""The batch-size optimizer client against a real `zeus bso serve` on loopback (SQLite)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import run_python
from zeuscpp.device import get_gpus
from zeuscpp.monitor import ZeusMonitor
from zeuscpp.optimizer.batch_size import (
    BatchSizeOptimizer,
    JobSpec,
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

ZEUS_BIN = os.environ.get("ZEUSCPP_ZEUS_BIN", "")


@pytest.fixture
def server(tmp_path):
    """A `zeus bso serve` on a free loopback port with a fresh SQLite database."""
    if not os.path.exists(ZEUS_BIN):
        pytest.fail(f"ZEUSCPP_ZEUS_BIN does not name the zeus binary: {ZEUS_BIN!r}")
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [ZEUS_BIN, "bso", "serve", "--port", "0", "--port-file", str(port_file),
         "--database-url", f"sqlite:///{tmp_path}/bso.db", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"zeus bso serve did not start: {proc.communicate()[1]}")
        time.sleep(0.02)
    url = f"http://127.0.0.1:{int(port_file.read_text())}"
    _SERVERS[url] = (proc, str(tmp_path / "bso.db"))
    yield url
    stop_server(url)


_SERVERS: dict[str, tuple[subprocess.Popen, str]] = {}


def stop_server(url: str) -> str:
    """Stops the service (SIGTERM: a clean exit) and returns its database file."""
    proc, db = _SERVERS[url]
    if proc.poll() is None:
        proc.terminate()
    assert proc.wait(timeout=30) == 0, proc.communicate()[1]
    return db


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def spec(**overrides) -> JobSpec:
    fields = dict(job_id_prefix="resnet", job_id="resnet-1", batch_sizes=[64, 16, 32],
                  default_batch_size=32, target_metric=0.9, max_epochs=4, mab_seed=7)
    fields.update(overrides)
    return JobSpec(**fields)


def test_job_spec_is_checked_by_the_service_rules():
    s = spec(beta_knob=None)
    assert s.batch_sizes == [16, 32, 64]  # sorted, as the service keeps them
    assert s.eta_knob == 0.5 and s.beta_knob is None and s.max_epochs == 4
    assert json.loads(s.json())["job_id"] == "resnet-1"
    assert "job_id" not in json.loads(spec(job_id=None).json())
    with pytest.raises(ZeusBSOConfigError, match="default_batch_size"):
        spec(default_batch_size=48)
    with pytest.raises(ZeusBSOConfigError, match="eta_knob"):
        spec(eta_knob=1.5)
    with pytest.raises(ValueError, match="job_id"):
        spec(job_id="other-1")  # must start with the prefix
    with pytest.raises(ZeusBSOConfigError):
        spec(target_metric=float("nan"))
    with pytest.raises(TypeError):
        JobSpec(job_id_prefix="x", batch_sizes=[1], default_batch_size=1, gpu_model="A100")


def test_a_converging_run_reports_cumulative_epochs_and_stops(server):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    bso = BatchSizeOptimizer(monitor, server, spec())
    gpus = get_gpus()
    assert bso.job_id == "resnet-1"
    assert bso.gpu_model == gpus.get_name(0)
    assert bso.max_power == gpus.get_power_management_limit_constraints(0)[1] // 1000
    assert bso.number_of_gpus == 1
    with pytest.raises(ZeusBSOOperationOrderError):
        bso.on_evaluate(0.1)
    batch_size = bso.get_batch_size()
    assert batch_size == 32  # the first trial explores the default
    assert bso.get_batch_size() == 32 and bso.trial_number == 1  # cached, no second trial
    monitor.begin_window("outer")
    bso.on_train_begin()
    # Training work on the simulated GPU, each epoch's work in a window of its
    # own: what the service records must hold both (HTTP round trips between
    # epochs add idle time to "outer" only, so "outer" is just an upper bound).
    monitor.begin_window("work-1")
    get_gpus().simulated(0).execute(60.0)
    work = [monitor.end_window("work-1")]
    first = bso.on_evaluate(0.5)
    assert not first.stop_train and not bso.training_finished
    monitor.begin_window("work-2")
    get_gpus().simulated(0).execute(20.0)
    work.append(monitor.end_window("work-2"))
    answer = bso.on_evaluate(0.95)
    outer = monitor.end_window("outer")
    assert answer.stop_train and answer.converged and bso.training_finished
    # A repeated report gets upstream's "already reported" answer.
    status, body = post(server + "/report", dict(job_id="resnet-1", batch_size=32, trial_number=1,
                                                  time=1.0, energy=1.0, metric=0.95, current_epoch=2))
    assert status == 200 and body["stop_train"] and "already reported" in body["message"]
    # The service recorded both epochs together (cumulative time and GPU energy;
    # the last epoch alone would hold about a quarter of the work).
    with sqlite3.connect(stop_server(server)) as db:
        time_s, energy, status = db.execute(
            "SELECT time, energy, status FROM trials WHERE trial_number = 1").fetchone()
    assert status == "Succeeded"
    assert sum(w.total_energy for w in work) <= energy <= outer.total_energy
    assert sum(w.time for w in work) <= time_s <= outer.time


def test_a_run_that_does_not_converge_raises_train_fail(server):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    bso = BatchSizeOptimizer(monitor, server, spec(max_epochs=2, beta_knob=None))
    bso.get_batch_size()
    bso.on_train_begin()
    bso.on_evaluate(0.1)
    with pytest.raises(ZeusBSOTrainFailError, match="Relaunch"):
        bso.on_evaluate(0.2)
    assert bso.training_finished
    # The next run of the job gets a new trial with another batch size.
    again = BatchSizeOptimizer(monitor, server, spec(max_epochs=2, beta_knob=None))
    assert again.get_batch_size() != 32 and again.trial_number == 2


def test_only_rank_zero_asks_and_conflicting_specs_are_refused(server):
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    worker = BatchSizeOptimizer(monitor, server, spec(), rank=1)
    with pytest.raises(ZeusBSOBadOperationError, match="rank 0"):
        worker.get_batch_size()
    with pytest.raises(ZeusBSORuntimError, match="409"):
        BatchSizeOptimizer(monitor, server, spec(max_epochs=9))


def test_configuration_errors():
    with pytest.raises(ZeusBSOConfigError, match="at least one GPU"):
        BatchSizeOptimizer(ZeusMonitor(gpu_indices=[], sync_execution_with=None),
                           "http://127.0.0.1:1", spec())
    with pytest.raises(TypeError):
        BatchSizeOptimizer(ZeusMonitor(gpu_indices=[0], sync_execution_with=None),
                           "http://127.0.0.1:1", {"job_id_prefix": "x"})


def test_an_unreachable_service_is_a_runtime_error_after_the_retries():
    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    started = time.monotonic()
    with pytest.raises(ZeusBSORuntimError):
        BatchSizeOptimizer(monitor, "http://127.0.0.1:1", spec(), attempts=3, retry_delay=0.05)
    assert time.monotonic() - started >= 0.1  # it did retry


@pytest.mark.parametrize("ending", ["raise RuntimeError('crash')", "sys.exit(3)"])
def test_an_abnormal_exit_marks_the_trial_failed(server, ending):
    child = run_python(f"""
        import sys
        from zeuscpp.monitor import ZeusMonitor
        from zeuscpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec
        monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
        bso = BatchSizeOptimizer(monitor, {server!r}, JobSpec(
            job_id_prefix="resnet", job_id="resnet-1", batch_sizes=[16, 32, 64],
            default_batch_size=32, target_metric=0.9, max_epochs=4, mab_seed=7))
        print(bso.get_batch_size(), bso.trial_number, flush=True)
        bso.on_train_begin()
        {ending}
        """)
    assert child.returncode != 0
    batch_size, trial = map(int, child.stdout.split())
    status, body = post(server + "/report", dict(job_id="resnet-1", batch_size=batch_size,
                                                  trial_number=trial, time=1.0, energy=1.0,
                                                  metric=0.95, current_epoch=1))
    assert status == 400 and "failed" in body["message"].lower(), body
