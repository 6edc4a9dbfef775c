"""The scripts in examples/python run on the simulated GPU."""

from __future__ import annotations

import os
import re
import time
import subprocess
import sys

from conftest import SOURCE_DIR
from test_metric import _metrics, gateway  # noqa: F401 (a fixture: a real Pushgateway on loopback)

EXAMPLES = os.path.join(SOURCE_DIR, "examples", "python")


def run_example(name: str, *args: str, gpus: int = 1) -> subprocess.CompletedProcess:
    env = dict(os.environ, ZEUS_GPU_BACKEND="sim", ZEUS_SIM_GPUS=str(gpus), GLOO_SOCKET_IFNAME="lo")
    env.pop("ELECTRICITYMAPS_API_TOKEN", None)
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_example_is_tested():
    assert sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")) == [
        "carbon_emission.py",
        "measure_energy.py",
        "push_metrics.py",
        "train_data_parallel.py",
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


def test_train_data_parallel_ranks_agree():
    result = run_example("train_data_parallel.py", "--world-size", "2", "--epochs", "3", gpus=2)
    assert result.returncode == 0, result.stdout + result.stderr
    chosen = re.findall(r"rank (\d): chosen power limit (\d+) W \((.*)\), GPU (\d) now at (\d+) W", result.stdout)
    assert sorted(c[0] for c in chosen) == ["0", "1"], result.stdout
    # One limit for all ranks, chosen over both ranks' GPUs, and applied.
    assert len({c[1] for c in chosen}) == 1
    assert all(c[2] == "zeus-cost(eta=0.5, world_size=2)" and c[4] == c[1] for c in chosen)


def test_carbon_emission_from_an_offline_csv(tmp_path):
    hour = int(time.time()) // 3600 * 3600
    csv = tmp_path / "intensity.csv"
    csv.write_text("time,value\n" + "".join(f"{hour + 3600 * h},{300 + 100 * (h % 2)}\n" for h in range(-2, 3)))
    result = run_example("carbon_emission.py", "--intensity-csv", str(csv), "--epochs", "2")
    assert result.returncode == 0, result.stderr
    epochs = re.findall(r"epoch \d: [\d.]+ s, ([\d.]+) J, ([\d.]+) gCO2eq", result.stdout)
    assert len(epochs) == 2, result.stdout
    for joules, grams in epochs:  # 300 or 400 g/kWh, depending on the hour the epoch ran in
        assert float(joules) > 0
        # (1 % for the printed roundings of joules and grams)
        assert 300 * 0.99 <= float(grams) / (float(joules) / 3.6e6) <= 400 * 1.01
    # Without a token or a file it says what it assumes, and still reports.
    plain = run_example("carbon_emission.py", "--epochs", "1", "--constant", "250")
    assert plain.returncode == 0 and "assuming 250.0 gCO2eq/kWh" in plain.stdout


def test_push_metrics_to_a_real_pushgateway(gateway):
    result = run_example("push_metrics.py", "--pushgateway", gateway, "--epochs", "2", "--steps", "3")
    assert result.returncode == 0, result.stderr
    text = _metrics(gateway)
    assert 'energy_monitor_gpu_energy_joules_count{index="0",instance="",job="training_step",window="step"} 6' in text
    for epoch in (0, 1):
        assert f'energy_monitor_gpu_energy_joules_total{{index="0",instance="",job="training_epoch",window="epoch_{epoch}"}}' in text
        assert f'power_monitor_gpu_power_watts{{index="0",instance="",job="training_power",window="epoch_{epoch}"}}' in text
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
