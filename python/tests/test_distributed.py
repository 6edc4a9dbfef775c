"""Two ranks over torch.distributed (gloo): the optimizer's measurements are reduced across
ranks through torch.distributed itself (energy summed, time the slowest rank's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def test_two_ranks_reduce_and_choose_the_same_limit(tmp_path):
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1", GLOO_SOCKET_IFNAME="lo")
    worker = os.path.join(os.path.dirname(__file__), "distributed_worker.py")
    init = tmp_path / "rendezvous"
    outs = [tmp_path / f"rank{r}.json" for r in range(2)]
    procs = [
        subprocess.Popen([sys.executable, worker, str(r), "2", str(init), str(outs[r])], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for r in range(2)
    ]
    logs = [p.communicate(timeout=240)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    ranks = [json.loads(o.read_text()) for o in outs]

    for r in ranks:
        assert r["reducer"] == "TorchDistributedReducer"  # picked up automatically
        assert r["selector"] == "zeus-cost(eta=0.5, world_size=2)"  # GPUs over all ranks
        assert r["loss_last"] < r["loss_first"]
    # Same collective calls in the same order on both ranks, each reduced right.
    assert [c[0] for c in ranks[0]["calls"]] == [c[0] for c in ranks[1]["calls"]]
    assert len(ranks[0]["calls"]) == 1 + 2 * 3  # world size, then (energy, time) per limit
    for c0, c1 in zip(ranks[0]["calls"], ranks[1]["calls"]):
        expected = c0[1] + c1[1] if c0[0] == "all_reduce_sum" else max(c0[1], c1[1])
        assert c0[2] == pytest.approx(expected) and c1[2] == pytest.approx(expected)
    # The optimizer's profile is the reduced one, identical on both ranks.
    assert ranks[0]["measurements"] == ranks[1]["measurements"]
    energies = [c for c in ranks[0]["calls"][1:] if c[0] == "all_reduce_sum"]
    times = [c for c in ranks[0]["calls"][1:] if c[0] == "all_reduce_max"]
    for (limit, energy, time), e, t in zip(ranks[0]["measurements"], energies, times):
        assert energy == pytest.approx(e[2]) and time == pytest.approx(t[2])
    assert ranks[0]["optimal"] == ranks[1]["optimal"]
    assert ranks[0]["limit_now"] == ranks[1]["limit_now"] == ranks[0]["optimal"] * 1000
