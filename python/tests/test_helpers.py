"""Upstream's small helpers at their module paths: RAPL zone lookup, SYS_ADMIN, env, cost, LR scalers."""

from __future__ import annotations

import math

import pytest

from zeuscpp.device import common as device_common
from zeuscpp.device.cpu import rapl
from zeuscpp.device.common import has_sys_admin
from zeuscpp.device.cpu.rapl import ZeusRAPLNotSupportedError, get_current_rapl_zone_id
from zeuscpp.exception import ZeusBaseCPUError
from zeuscpp.utils.env import get_env
from zeuscpp.utils.lr_scaler import LinearScaler, SquareRootScaler
from zeuscpp.utils.metric import zeus_cost


def fake_system(tmp_path, monkeypatch, *, cpu: int, package: int, die: int | None, zones: dict[str, str]):
    """A /proc/<pid>/stat, the CPU's sysfs topology and a powercap tree."""
    proc = tmp_path / "proc" / "4242"
    proc.mkdir(parents=True)
    # The command name holds spaces and parentheses; the CPU is field 39.
    fields = [str(i) for i in range(3, 39)] + [str(cpu)] + ["0"] * 13
    (proc / "stat").write_text(f"4242 (my (odd) cmd) S {' '.join(fields[1:])}\n")
    topology = tmp_path / "cpu" / f"cpu{cpu}" / "topology"
    topology.mkdir(parents=True)
    (topology / "physical_package_id").write_text(f"{package}\n")
    if die is not None:
        (topology / "die_id").write_text(f"{die}\n")
    powercap = tmp_path / "powercap"
    for zone, name in zones.items():
        (powercap / zone).mkdir(parents=True)
        (powercap / zone / "name").write_text(name + "\n")
    monkeypatch.setattr(rapl, "_PROC_DIR", str(tmp_path / "proc"))
    monkeypatch.setattr(rapl, "_CPU_DIR", str(tmp_path / "cpu"))
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(powercap))


def test_rapl_zone_of_the_package_the_process_runs_on(tmp_path, monkeypatch):
    # Zone ids need not equal package ids; sub-zones never match.
    fake_system(tmp_path, monkeypatch, cpu=17, package=0, die=None,
                zones={"intel-rapl:0": "package-1", "intel-rapl:1": "package-0", "intel-rapl:0:0": "package-0"})
    assert get_current_rapl_zone_id(4242) == 1


def test_rapl_zone_named_by_die(tmp_path, monkeypatch):
    fake_system(tmp_path, monkeypatch, cpu=3, package=1, die=2,
                zones={"intel-rapl:0": "package-1-die-0", "intel-rapl:1": "package-1-die-2"})
    assert get_current_rapl_zone_id(4242) == 1


def test_no_matching_rapl_zone_says_which_was_looked_for(tmp_path, monkeypatch):
    fake_system(tmp_path, monkeypatch, cpu=3, package=5, die=None, zones={"intel-rapl:0": "package-0"})
    with pytest.raises(ZeusRAPLNotSupportedError, match="package-5") as info:
        get_current_rapl_zone_id(4242)
    assert isinstance(info.value, ZeusBaseCPUError)


def test_rapl_zone_of_this_process_reads_the_real_proc_and_topology():
    # The fixture's powercap tree is empty: the real /proc and sysfs are parsed, then no zone matches.
    with pytest.raises(ZeusRAPLNotSupportedError, match="last ran on CPU \\d+"):
        get_current_rapl_zone_id()


@pytest.mark.parametrize("mask, expected", [("0000000000200000", True), ("000001ffffdfffff", False), ("0", False)])
def test_sys_admin_from_the_effective_capability_mask(tmp_path, monkeypatch, mask, expected):
    status = tmp_path / "status"
    status.write_text(f"Name:\tpython3\nCapInh:\t0000000000200000\nCapEff:\t{mask}\n")
    monkeypatch.setattr(device_common, "_STATUS", str(status))
    assert has_sys_admin() is expected


def test_sys_admin_falls_back_to_capget(tmp_path, monkeypatch):
    real = has_sys_admin()
    monkeypatch.setattr(device_common, "_STATUS", str(tmp_path / "missing"))
    assert has_sys_admin() is real


def test_get_env(monkeypatch):
    monkeypatch.setenv("ZEUSCPP_TEST_INT", "42")
    monkeypatch.setenv("ZEUSCPP_TEST_BOOL", "TRUE")
    monkeypatch.setenv("ZEUSCPP_TEST_BAD_BOOL", "1")
    monkeypatch.delenv("ZEUSCPP_TEST_UNSET", raising=False)
    assert get_env("ZEUSCPP_TEST_INT", int) == 42
    assert get_env("ZEUSCPP_TEST_BOOL", bool) is True
    with pytest.raises(ValueError, match="'true' or 'false'"):
        get_env("ZEUSCPP_TEST_BAD_BOOL", bool)
    assert get_env("ZEUSCPP_TEST_UNSET", float, 2.5) == 2.5
    with pytest.raises(ValueError, match="ZEUSCPP_TEST_UNSET is not set"):
        get_env("ZEUSCPP_TEST_UNSET", str)


def test_zeus_cost_and_lr_scalers():
    assert zeus_cost(energy=100.0, time=2.0, eta_knob=0.25, max_power=300) == 0.25 * 100 + 0.75 * 300 * 2
    assert zeus_cost(100.0, 2.0, 1.0, 300) == 100.0
    assert SquareRootScaler(bs=32, lr=0.1).compute_lr(128) == pytest.approx(0.2)
    assert LinearScaler(bs=32, lr=0.1).compute_lr(128) == pytest.approx(0.4)
    assert math.isclose(SquareRootScaler(64, 1.0).compute_lr(16), 0.5)
