"""zeuscpp.optimizer.pipeline_frequency against a real `zeus perseus serve`: registration,
schedules, hooks, two ranks over torch.distributed, and clocks restored on every exit path."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from pfo_server import PLAN, Server, write_plan
from zeuscpp.exception import ZeusBaseError
from zeuscpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

HERE = os.path.dirname(__file__)


@pytest.fixture
def one_stage_server(tmp_path):
    server = Server(tmp_path, write_plan(tmp_path, stages=1))
    yield server
    server.stop()


def test_one_rank_follows_its_schedule(one_stage_server):
    opt = PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 1, one_stage_server.url)
    assert "+dp1+pp1+tp1+PointSolution" in opt.job_id
    assert opt.freq_schedule == PLAN[0]
    for _ in range(2):
        opt.on_step_begin()
        for name, freq in opt.freq_schedule:
            opt.on_instruction_begin(name)
            opt.wait_for_frequency()
            assert opt.current_frequency == freq
            opt.on_instruction_end(name)
        opt.on_step_end()
    with pytest.raises(RuntimeError, match="schedule expects 'forward'"):
        opt.on_instruction_begin("backward")  # upstream: RuntimeError
    opt.on_instruction_begin("forward")
    with pytest.raises(RuntimeError, match="ended after 1 of the schedule's 4"):
        opt.on_step_end()
    opt.close()


def test_refusals_are_errors(one_stage_server):
    with pytest.raises(RuntimeError, match="init_process_group"):
        PipelineFrequencyOptimizer(1, 0, 1, 0, 0, 1, 2, 1, 2, one_stage_server.url)
    with pytest.raises(ZeusBaseError, match="unknown job nope"):
        PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 1, one_stage_server.url, job_id="nope")
    with pytest.raises(ValueError, match="world_size 3 is not"):
        PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 3, one_stage_server.url, job_id="x")


def test_two_ranks_share_the_job_over_torch_distributed(tmp_path):
    server = Server(tmp_path, write_plan(tmp_path, stages=2))
    try:
        env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1", GLOO_SOCKET_IFNAME="lo")
        outs = [tmp_path / f"rank{r}.json" for r in range(2)]
        procs = [
            subprocess.Popen([sys.executable, os.path.join(HERE, "pfo_worker.py"), str(r),
                              str(tmp_path / "rendezvous"), server.url, str(outs[r])], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for r in range(2)
        ]
        logs = [p.communicate(timeout=240)[0] for p in procs]
        for p, log in zip(procs, logs):
            assert p.returncode == 0, log
    finally:
        server.stop()
    ranks = [json.loads(o.read_text()) for o in outs]
    assert ranks[0]["job_id"] == ranks[1]["job_id"]
    assert ranks[0]["job_id"].endswith("+dp1+pp2+tp1+PointSolution+pytest")
    for r in range(2):
        assert [tuple(x) for x in ranks[r]["schedule"]] == PLAN[r]
        assert ranks[r]["applied"] == [f for _, f in PLAN[r]] * 2
    assert (tmp_path / "dump" / ranks[0]["job_id"] / "ranks.json").exists()


def journal(path) -> list[tuple[str, int]]:
    return [(line.split()[0], int(line.split()[2])) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("mode", ["return", "exception", "sigterm"])
def test_clocks_come_back_on_every_exit_path(one_stage_server, tmp_path, mode):
    log = tmp_path / "journal"
    env = dict(os.environ, ZEUS_GPU_BACKEND="nvml", ZEUS_FAKE_NVML_JOURNAL=str(log),
               ZEUS_NVML_LIBRARY=os.environ["ZEUSCPP_FAKE_NVML"])
    child = subprocess.Popen([sys.executable, os.path.join(HERE, "pfo_exit_child.py"),
                              one_stage_server.url, mode], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    if mode == "sigterm":
        child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == {"return": 0, "exception": 1, "sigterm": -signal.SIGTERM}[mode], err
    lines = journal(log)
    locks = [v for f, v in lines if f == "nvmlDeviceSetGpuLockedClocks"]
    # The fake H100's top clock at start (memory locked to its maximum), then the
    # frequency of the last instruction begun, then resets.
    assert locks[0] == 1980 and locks[-1] == PLAN[0][1][1], lines
    assert ("nvmlDeviceSetMemoryLockedClocks", 2619) in lines
    assert lines[-1][0].startswith("nvmlDeviceReset") or lines[-1][0] == "nvmlDeviceSetPowerManagementLimit", lines
    assert ("nvmlDeviceResetGpuLockedClocks", 0) in lines
    assert ("nvmlDeviceResetMemoryLockedClocks", 0) in lines
