"""The scripts in examples/python run on the simulated GPU."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import SOURCE_DIR

EXAMPLES = os.path.join(SOURCE_DIR, "examples", "python")


def run_example(name: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS="1")
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_example_is_tested():
    assert sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")) == [
        "measure_energy.py",
        "train_with_chase.py",
        "train_with_power_limit.py",
    ]


def test_measure_energy():
    result = run_example("measure_energy.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("part ") == 3
    assert "power monitor over the same span: {0:" in result.stdout


def test_train_with_power_limit(tmp_path):
    profile = tmp_path / "profile.json"
    result = run_example("train_with_power_limit.py", "--epochs", "3", "--profile-path", str(profile))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("profiled ") == 5  # 300 W down to 100 W in 50 W steps
    assert "chosen power limit: " in result.stdout and "zeus-cost(eta=0.5)" in result.stdout
    assert profile.exists()
    again = run_example("train_with_power_limit.py", "--epochs", "1", "--profile-path", str(profile),
                        "--selector", "max-slowdown")
    assert again.returncode == 0, again.stderr
    assert "max-slowdown(1.1)" in again.stdout


def test_train_with_chase():
    result = run_example("train_with_chase.py", "--steps", "200")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sum(line.startswith("profiled ") for line in lines) == 5  # 300 W down to 100 W
    decisions = [line for line in lines if " -> " in line]
    # (200 steps - 36 profiling steps) x 10 simulated minutes: 27 hours, one decision each.
    assert len(decisions) == 28, result.stdout
    assert decisions[0].startswith("2022-03-15 00:00 UTC") and decisions[-1].startswith("2022-03-16 03:00 UTC")
    assert lines[-1] == "28 decisions, 0 periods without a signal"
