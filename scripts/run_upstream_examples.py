#!/usr/bin/env python3
"""Runs the Python Zeus's own example scripts against zeuscpp, beside the project.

The examples are upstream's code, so they are not copied into this project:
point --upstream (or ZEUS_UPSTREAM_SRC) at a checkout of
github.com/ml-energy/zeus. Each script is copied into a scratch folder with
only its import lines changed (``zeus`` -> ``zeuscpp``) and run on the
simulated GPU; the script says which lines changed and whether each example
ran. Nothing else in the scripts is touched.

The examples call ``torch.cuda.set_device`` and ``.cuda()`` unconditionally
and start NCCL; on a machine without a GPU a ``sitecustomize`` module makes
those run on the CPU (no-op device moves, gloo instead of NCCL). That is a
change to the machine, not to the scripts, and the report lists it.

Needs Debian's python3-torch, python3-torchvision and python3-pil, a built
tree (--build, default build/), and for the Prometheus example a Pushgateway
on localhost:9091 (prometheus-pushgateway; started here when the binary is
found and the port is free).

    ZEUS_UPSTREAM_SRC=~/zeus python3 scripts/run_upstream_examples.py
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# A small torchvision model and a 64-step epoch (the optimizer warms up for 10
# and profiles for 40 steps per limit); the simulated GPU offers three limits
# (300, 275, 250 W) so profiling ends within a few epochs on a CPU.
EXAMPLES = {
    "power_limit_optimizer/train_single.py": ["-a", "mobilenet_v3_small", "-b", "2", "-j", "0",
                                              "--epochs", "5", "--gpu", "0"],
    "prometheus/train_single.py": ["-a", "mobilenet_v3_small", "-b", "2", "-j", "0", "--epochs", "1",
                                   "--gpu", "0"],
    "power_limit_optimizer/train_dp.py": None,  # torchrun with two ranks, below
}

IMPORT = re.compile(r"^(\s*)(from|import)\s+zeus(\.|\s|$)")

CPU_FOR_CUDA = '''\
# Written by scripts/run_upstream_examples.py: the examples' CUDA calls run on
# the CPU (no GPU on this machine); this changes the machine, not the scripts.
import torch
import torch.distributed as dist
import torch.nn as nn

torch.cuda.set_device = lambda *args, **kwargs: None
torch.cuda.synchronize = lambda *args, **kwargs: None
torch.Tensor.cuda = lambda self, *args, **kwargs: self
nn.Module.cuda = lambda self, *args, **kwargs: self
_init_process_group = dist.init_process_group


def _gloo_instead_of_nccl(backend=None, *args, **kwargs):
    return _init_process_group("gloo", *args, **kwargs)


dist.init_process_group = _gloo_instead_of_nccl
_ddp_init = nn.parallel.DistributedDataParallel.__init__


def _ddp_on_cpu(self, module, *args, device_ids=None, output_device=None, **kwargs):
    _ddp_init(self, module, *args, **kwargs)  # device_ids name GPUs; a CPU module takes none


nn.parallel.DistributedDataParallel.__init__ = _ddp_on_cpu

# Observation only: the optimizers' decisions, which zeuscpp logs at INFO.
import logging

logging.basicConfig(format="%(name)s %(levelname)s: %(message)s")
logging.getLogger("zeuscpp").setLevel(logging.INFO)
'''


def rewrite_imports(source: pathlib.Path, target: pathlib.Path) -> list[str]:
    changed = []
    lines = source.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if IMPORT.match(line):
            new = re.sub(r"\bzeus\b", "zeuscpp", line, count=1)
            if new != line:
                changed.append(f"{source.name}:{i + 1}: {line.strip()}  ->  {new.strip()}")
                lines[i] = new
    target.write_text("".join(lines))
    return changed


def image_folder(root: pathlib.Path) -> None:
    from PIL import Image

    for split, count in (("train", 64), ("val", 4)):
        for label in ("c0", "c1"):
            folder = root / split / label
            folder.mkdir(parents=True)
            for k in range(count):
                shade = (40 * k) % 255 if label == "c0" else 255 - (40 * k) % 255
                Image.new("RGB", (32, 32), (shade, shade, shade)).save(folder / f"{k}.png")


def two_ranks(command: list[str], folder: pathlib.Path, env: dict) -> subprocess.CompletedProcess:
    """Starts two ranks with the environment torchrun gives them (Debian's torch
    1.13 torchrun fails on Python 3.11 before starting any worker)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ranks = []
    for rank in range(2):
        rank_env = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        ranks.append(subprocess.Popen(command, cwd=folder, env=rank_env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=1800) for p in ranks]
    code = max(p.returncode for p in ranks)
    return subprocess.CompletedProcess(command, code, outputs[0][0] + outputs[1][0],
                                       outputs[0][1] + outputs[1][1])


def powercap_tree(root: pathlib.Path) -> None:
    """Two RAPL packages (the Prometheus example measures cpu_indices=[0, 1])."""
    for package in (0, 1):
        zone = root / f"intel-rapl:{package}"
        zone.mkdir(parents=True)
        (zone / "name").write_text(f"package-{package}\n")
        (zone / "energy_uj").write_text("1000000\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")
        (zone / "enabled").write_text("1\n")


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", default=os.environ.get("ZEUS_UPSTREAM_SRC"))
    parser.add_argument("--build", default="build")
    parser.add_argument("--only", action="append", help="run only these examples (repeatable)")
    args = parser.parse_args()
    if not args.upstream or not (pathlib.Path(args.upstream) / "examples").is_dir():
        sys.exit("give --upstream (or ZEUS_UPSTREAM_SRC): a checkout of the Python Zeus with examples/")
    upstream = pathlib.Path(args.upstream) / "examples"
    package = pathlib.Path(args.build).resolve() / "python"
    if not (package / "zeuscpp").is_dir():
        sys.exit(f"{package}/zeuscpp not found: build the project first (make)")

    work = pathlib.Path(tempfile.mkdtemp(prefix="zeus_upstream_examples_"))
    shim = work / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(CPU_FOR_CUDA)
    image_folder(work / "data")
    powercap_tree(work / "powercap")
    model = work / "sim_gpu.json"
    model.write_text('{"name": "Simulated GPU (three limits)", "power_limit_min_w": 250, '
                     '"power_limit_max_w": 300, "power_limit_default_w": 300}\n')
    env = dict(os.environ, PYTHONPATH=f"{shim}:{package}", ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="2",
               ZEUS_SIM_MODEL=str(model), ZEUS_POWERCAP_ROOT=str(work / "powercap"),
               PYTHONDONTWRITEBYTECODE="1")
    gateway = None
    if port_free(9091) and shutil.which("prometheus-pushgateway"):
        gateway = subprocess.Popen(["prometheus-pushgateway", "--web.listen-address=127.0.0.1:9091"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
    results = []
    try:
        for name, example_args in EXAMPLES.items():
            if args.only and name not in args.only:
                continue
            folder = work / name.replace("/", "_")
            folder.mkdir()
            script = folder / pathlib.Path(name).name
            changed = rewrite_imports(upstream / name, script)
            start = time.monotonic()
            if example_args is None:
                run = two_ranks([sys.executable, str(script), str(work / "data"), "-a",
                                 "mobilenet_v3_small", "-b", "2", "-j", "0", "--epochs", "5"],
                                folder, env)
            else:
                command = [sys.executable, str(script), str(work / "data"), *example_args]
                run = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                                     timeout=1800)
            seconds = time.monotonic() - start
            results.append((name, run.returncode, seconds, changed))
            print(f"== {name}: exit {run.returncode} in {seconds:.0f} s; import lines changed: "
                  f"{len(changed)}")
            for c in changed:
                print(f"   {c}")
            if run.returncode != 0:
                print(run.stdout[-3000:], run.stderr[-6000:], sep="\n")
            else:  # what the optimizer decided, from its log
                for line in run.stderr.splitlines():
                    if line.startswith("zeuscpp INFO") and ("limit" in line or "profil" in line):
                        print(f"   {line[:200]}")
    finally:
        if gateway:
            gateway.terminate()
    print(f"scratch folder: {work}")
    print("changes other than import lines: none to the scripts. The machine: CUDA calls ran on the CPU "
          "(sitecustomize), two simulated GPUs with limits 250-300 W, a fake two-package RAPL tree, "
          "two ranks started with torchrun's environment")
    return 0 if all(rc == 0 for _, rc, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
