"""A one-rank PipelineFrequencyOptimizer on the fake NVML that waits to be signalled
(see test_pipeline_frequency.py); the fake's journal shows what it restored."""

from __future__ import annotations

import sys
import time

from zeuscpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer


def main() -> None:
    url, mode = sys.argv[1], sys.argv[2]
    opt = PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 1, url)
    name, _ = opt.freq_schedule[1]
    opt.on_instruction_begin(opt.freq_schedule[0][0])
    opt.on_instruction_begin(name)
    opt.wait_for_frequency()
    print("ready", flush=True)
    if mode == "return":
        return
    if mode == "exception":
        raise RuntimeError("training failed")
    time.sleep(60)  # SIGTERM arrives here


if __name__ == "__main__":
    main()
