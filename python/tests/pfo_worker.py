"""One rank of the two-process pipeline-frequency test (see test_pipeline_frequency.py):
registers through torch.distributed, runs two iterations and writes what it saw as JSON."""

from __future__ import annotations

import json
import sys

import torch.distributed as dist

from zeuscpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer


def main() -> None:
    rank, init_file, url, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    opt = PipelineFrequencyOptimizer(rank, 0, rank, 0, 0, 1, 2, 1, 2, url, job_metadata="pytest")
    applied = []
    for _ in range(2):
        opt.on_step_begin()
        for name, _freq in opt.freq_schedule:
            opt.on_instruction_begin(name)
            opt.wait_for_frequency()
            applied.append(opt.current_frequency)
            opt.on_instruction_end(name)
        opt.on_step_end()
    result = {"job_id": opt.job_id, "schedule": opt.freq_schedule, "applied": applied}
    opt.close()
    dist.barrier()
    dist.destroy_process_group()
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
