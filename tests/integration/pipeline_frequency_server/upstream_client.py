#!/usr/bin/env python3
"""Drives `zeus perseus serve` the way the Python Zeus's client does.

Upstream's PipelineFrequencyOptimizer (zeus/optimizer/pipeline_frequency/
optimizer.py) sends, in this order:
  rank 0: POST /register_job, body JobInfo(...).dict(): job_id "", the three
          degrees, world_size, job_metadata; expects 200 and a JSON string;
  every rank: POST /register_rank/{job_id}, body RankInfo(...).dict() with the
          graphics clocks at the highest memory clock, descending; expects 200;
  every rank: GET /schedule/{job_id} with params {"rank": rank}, no timeout;
          expects 200 and FrequencySchedule{rank, frequencies: [[name, MHz]...]}
          for its own rank, then pops one entry per on_instruction_begin(name)
          and expects it used up at on_step_end.
This script issues the same requests with the standard library (httpx and
pydantic are not needed) from one process per rank, for a 3D-parallel job
(pp 4 x dp 2) served by PointSolution3D from a lowtime plan file, and checks
every answer as that client would. Exit 0 on success.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

PP, DP, TP = 4, 2, 1
WORLD = PP * DP * TP
MICROBATCHES = 3
CLOCKS = list(range(1410, 209, -15))  # an A100's, descending as upstream sends them


def one_f_one_b(stage: int) -> list[str]:
    """Synchronous 1F1B instruction names of a stage (DeepSpeed order)."""
    warmup = min(PP - stage, MICROBATCHES)
    names = ["forward"] * warmup
    for _ in range(MICROBATCHES - warmup):
        names += ["backward", "forward"]
    return names + ["backward"] * warmup


def stage_plan(stage: int) -> list[tuple[str, int]]:
    """The (name, MHz) list the plan file gives a stage."""
    return [(n, CLOCKS[(stage * 7 + i) % 30]) for i, n in enumerate(one_f_one_b(stage))]


def plan_file(directory: str) -> str:
    """A lowtime plan: one list of (name, MHz) per stage, lowtime's text layout."""
    path = os.path.join(directory, "freqs_pipeline_00007.py")
    with open(path, "w") as f:
        f.write("[\n")
        for s in range(PP):
            f.write(f"{stage_plan(s)},\n")
        f.write("]\n# Iteration 7 cost change: 1.5\n# Iteration 7 total cost: 100.0\n")
        f.write("# Iteration 7 total cost with P2P: 123.25\n")
    return path


def request(method: str, url: str, body=None, timeout=None):
    """(status, text) like httpx.post(url, json=body) / httpx.get(url, timeout=None)."""
    data = None
    headers = {}
    if body is not None:
        data = json.dumps(body).encode()  # httpx's json= encoding
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def rank_process(rank: int, url: str, job_queue, results) -> None:
    try:
        pp, dp, tp = rank // (DP * TP), (rank // TP) % DP, rank % TP
        job_id = None
        if rank == 0:
            status, text = request("POST", url + "/register_job", {
                "job_id": "", "pp_degree": PP, "dp_degree": DP, "tp_degree": TP,
                "world_size": WORLD, "job_metadata": None})
            assert status == 200, f"PFO server returned status code {status}: {text}"
            job_id = json.loads(text)
            assert isinstance(job_id, str), f"PFO server returned a strange job ID: {job_id=}"
            for _ in range(WORLD - 1):
                job_queue.put(job_id)
        else:
            job_id = job_queue.get(timeout=60)  # broadcast_object_list
        status, text = request("POST", url + f"/register_rank/{job_id}", {
            "rank": rank, "dp_rank": dp, "pp_rank": pp, "tp_rank": tp,
            "available_frequencies": CLOCKS})
        assert status == 200, f"PFO server returned status code {status}: {text}"
        query = urllib.parse.urlencode({"rank": rank})
        status, text = request("GET", url + f"/schedule/{job_id}?{query}", timeout=None)
        assert status == 200, f"PFO server returned status code {status}: {text}"
        schedule = json.loads(text)
        assert set(schedule) == {"rank", "frequencies"}, schedule
        assert schedule["rank"] == rank, f"schedule for rank {schedule['rank']} to rank {rank}"
        freqs = [tuple(x) for x in schedule["frequencies"]]
        assert all(isinstance(n, str) and isinstance(f, int) and len(x) == 2
                   for x in schedule["frequencies"] for n, f in [x]), freqs
        assert freqs == stage_plan(pp), f"rank {rank} (stage {pp}) got {freqs}"
        # on_instruction_begin / on_step_end, two iterations.
        for _ in range(2):
            it = iter(freqs)
            for name in one_f_one_b(pp):
                item = next(it, None)
                assert item is not None, "PFO server returned fewer frequencies than expected"
                assert item[0] == name, f"The next expected instruction is not {name}: {item[0]}"
            assert next(it, None) is None, "PFO server returned more frequencies than expected"
        results.put((rank, job_id, freqs))
    except BaseException as e:  # report to the parent, whatever it was
        results.put((rank, None, repr(e)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeus", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="zeus_pfo_wire_") as d:
        port_file = os.path.join(d, "port")
        env = dict(os.environ, ZEUS_PFO_SCHEDULER="PointSolution3D",
                   ZEUS_PFO_SCHEDULER_ARGS=json.dumps({"solution_path": plan_file(d)}),
                   ZEUS_PFO_DUMP_DIR=os.path.join(d, "dump"))
        server = subprocess.Popen([args.zeus, "perseus", "serve", "--port", "0", "--port-file",
                                   port_file], env=env, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(600):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                if server.poll() is not None:
                    print(server.stderr.read(), file=sys.stderr)
                    return 1
                time.sleep(0.05)
            url = "http://127.0.0.1:" + open(port_file).read().strip()
            # A bad registration answers 4xx, which upstream's client turns into RuntimeError.
            status, text = request("POST", url + "/register_job", {
                "job_id": "", "pp_degree": PP, "dp_degree": DP, "tp_degree": TP,
                "world_size": WORLD + 1, "job_metadata": None})
            assert 400 <= status < 500 and "world_size" in text, (status, text)

            ctx = mp.get_context("spawn")
            job_queue, results = ctx.Queue(), ctx.Queue()
            procs = [ctx.Process(target=rank_process, args=(r, url, job_queue, results))
                     for r in range(WORLD)]
            for p in procs:
                p.start()
            got = {}
            for _ in range(WORLD):
                rank, job_id, payload = results.get(timeout=90)
                assert job_id is not None, f"rank {rank}: {payload}"
                got[rank] = (job_id, payload)
            for p in procs:
                p.join(timeout=30)
            job_ids = {j for j, _ in got.values()}
            assert len(job_ids) == 1, job_ids
            job_id = job_ids.pop()
            assert job_id.split("+")[1:] == ["dp2", "pp4", "tp1", "PointSolution3D"], job_id
            for rank, (_, freqs) in got.items():
                same_stage = rank ^ 1  # the other data-parallel replica of the stage
                assert freqs == got[same_stage][1], (rank, same_stage)
            assert os.path.exists(os.path.join(d, "dump", job_id, "ranks.json"))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"ok: {WORLD} ranks registered and got their stages' schedules as upstream's client expects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
