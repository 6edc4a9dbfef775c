"""A `zeus perseus serve` process for the pipeline-frequency tests."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

# Two stages, two microbatches of 1F1B, on the simulated GPU's 15 MHz grid.
PLAN = {
    0: [("forward", 1410), ("forward", 1200), ("backward", 1200), ("backward", 1005)],
    1: [("forward", 1005), ("backward", 810), ("forward", 1005), ("backward", 810)],
}


def write_plan(directory: Path, stages: int = 2) -> Path:
    """A lowtime plan file (freqs_pipeline_00000.py) with `stages` schedules."""
    path = directory / "freqs_pipeline_00000.py"
    lines = ["["] + [f"{PLAN[s % 2]!r}," for s in range(stages)] + ["]", "# Iteration 0 total cost with P2P: 1.0"]
    path.write_text("\n".join(lines) + "\n")
    return path


class Server:
    """Runs the server on a free port until stopped."""

    def __init__(self, directory: Path, plan: Path, *extra: str) -> None:
        port_file = directory / "port"
        self.log = directory / "server.log"
        self.proc = subprocess.Popen(
            [os.environ["ZEUSCPP_ZEUS"], "perseus", "serve", "--port", "0", "--port-file",
             str(port_file), "--solution", str(plan), "--dump-dir", str(directory / "dump"), *extra],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        for _ in range(600):
            if port_file.exists() and port_file.read_text().strip():
                break
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text())
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
