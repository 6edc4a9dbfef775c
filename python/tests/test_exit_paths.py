"""GPU settings changed by the optimizer come back on every exit path of the Python process.

Each path runs in its own interpreter; the fake NVML journals setter calls to a
file that outlives the process, so the test reads what really happened last.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def start(mode: str, journal, optimizer: str = "global") -> subprocess.Popen:
    env = dict(os.environ, ZEUS_GPU_BACKEND="nvml", ZEUS_FAKE_NVML_JOURNAL=str(journal),
               EXIT_PATH_OPTIMIZER=optimizer, EXIT_PATH_TMP=str(journal.parent))
    env["ZEUS_NVML_LIBRARY"] = env["ZEUSCPP_FAKE_NVML"]
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, os.path.join(HERE, "exit_path_child.py"), mode], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def journal_lines(journal) -> list[tuple[str, int]]:
    out = []
    for line in journal.read_text().splitlines():
        function, _, value = line.split()
        out.append((function.replace("nvmlDeviceSet", ""), int(value)))
    return out


def assert_restored(journal, optimizer: str = "global") -> None:
    lines = journal_lines(journal)
    limits = [v for f, v in lines if f == "PowerManagementLimit"]
    persistence = [v for f, v in lines if f == "PersistenceMode"]
    # Profiling starts at the maximum; Chase (with a saved profile) sets its decision.
    first = 700000 if optimizer == "global" else 200000
    assert limits[0] == first and limits[-1] == 500000, lines  # set, then put back
    assert persistence == [1, 0], lines


@pytest.mark.parametrize("optimizer", ["global", "chase"])
@pytest.mark.parametrize(
    "mode,returncode",
    [("return", 0), ("exception", 1), ("sys_exit", 3)],
)
def test_exit_without_signals(tmp_path, mode, returncode, optimizer):
    journal = tmp_path / "journal"
    child = start(mode, journal, optimizer)
    out, err = child.communicate(timeout=60)
    assert child.returncode == returncode, err
    if mode == "exception":
        assert "RuntimeError: training crashed" in err
    assert_restored(journal, optimizer)


@pytest.mark.parametrize(
    "mode,sig,returncode",
    [
        ("sigint", signal.SIGINT, -signal.SIGINT),  # uncaught KeyboardInterrupt
        ("sigterm", signal.SIGTERM, -signal.SIGTERM),  # Python does not handle it: the guard does
        ("sigterm_python_handler", signal.SIGTERM, 7),  # the script's handler runs (sys.exit(7))
    ],
)
@pytest.mark.parametrize("optimizer", ["global", "chase"])
def test_exit_by_signal(tmp_path, mode, sig, returncode, optimizer):
    journal = tmp_path / "journal"
    child = start(mode, journal, optimizer)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(sig)
    out, err = child.communicate(timeout=60)
    assert child.returncode == returncode, err
    if mode == "sigint":
        assert "KeyboardInterrupt" in err
    assert_restored(journal, optimizer)


def test_a_caught_keyboard_interrupt_keeps_the_optimizer_working(tmp_path):
    journal = tmp_path / "journal"
    child = start("sigint_caught", journal)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.splitlines() == ["caught, limit 700000", "still optimizing, limit 700000"]
    assert_restored(journal)  # at the normal exit that followed
